import type { Metadata } from "next";
import { filtersFromAddress, IgnoredFilters, type SearchParams } from "@/components/shared/address-filters";
import { TimelineClient } from "@/components/timeline/timeline-client";
import { requirePagePerson } from "@/lib/auth/page-person";
import { loadTimeline, timelineQuerySchema } from "@/lib/views/timeline/queries";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Timeline" };

/** The first paint carries the lanes of a screen or two; the browser fetches the rest at once. */
const FIRST_PAINT_LANES = 30;

/** The timeline (docs/product.md#timeline): a lane per thread on a shared time axis, and the ledger below; kept live in the browser. */
export default async function TimelinePage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  await requirePagePerson("/timeline");
  const { raw, parsed } = filtersFromAddress(await searchParams, timelineQuerySchema);
  const query = parsed.success ? parsed.data : timelineQuerySchema.parse({});
  const timeline = await loadTimeline(query, { lanes: FIRST_PAINT_LANES });
  return (
    <main id="main" className="flex min-h-0 flex-1 flex-col gap-3 overflow-y-auto p-4">
      <h1 className="text-2xl font-bold">Timeline</h1>
      <IgnoredFilters parsed={parsed} />
      <TimelineClient initialTimeline={timeline} initialSearch={new URLSearchParams(raw).toString()} />
    </main>
  );
}
