import type { Metadata } from "next";
import { BoardClient } from "@/components/board/board-client";
import { withoutView } from "@/components/board/board-view";
import { filtersFromAddress, IgnoredFilters, type SearchParams } from "@/components/shared/address-filters";
import { IngestErrors } from "@/components/shared/ingest-errors";
import { loadBoard } from "@/lib/board/board";
import { listRecentEvents } from "@/lib/events/queries";
import { threadFiltersSchema } from "@/lib/views/threads/filters";
import { requirePagePerson } from "@/lib/auth/page-person";
import { abilitiesOf, roleSchema } from "@/lib/auth/roles";
import { BudgetNotice } from "@/components/usage/budget-notice";
import { crossedBudgets } from "@/lib/views/usage/usage";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Board" };

/**
 * The first paint carries a screenful of cards per column, not the whole board
 * (1,000 cards were 1.7 MB of HTML); the browser fetches the rest at once.
 */
const FIRST_PAINT_CARDS_PER_COLUMN = 12;

/** The board: rendered on the server with its data, then kept live in the browser. */
export default async function BoardPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const person = await requirePagePerson("/");
  const { denied, ...params } = await searchParams;
  const { raw, parsed } = filtersFromAddress(params, threadFiltersSchema);
  const filters = parsed.success ? parsed.data : threadFiltersSchema.parse({});
  const [board, ingestErrors, overBudget] = await Promise.all([
    loadBoard(filters, { cardsPerColumn: FIRST_PAINT_CARDS_PER_COLUMN }),
    listRecentEvents(["ingest_error"], 5),
    crossedBudgets(),
  ]);
  return (
    <main id="main" className="flex min-h-0 flex-1 flex-col gap-3 p-4">
      <h1 className="sr-only">Board</h1>
      {typeof denied === "string" && roleSchema.safeParse(denied).success ? (
        <p role="alert" className="text-sm text-danger">
          That page needs the {denied} role; you are {person.role}. Ask an admin.
        </p>
      ) : null}
      <IgnoredFilters parsed={parsed} />
      <IngestErrors events={ingestErrors} now={Date.parse(board.generated_at)} />
      <BudgetNotice budgets={overBudget} />
      {/* No Suspense boundary: the page is dynamic, so the board streams with the first paint. */}
      <BoardClient initialBoard={board} initialSearch={withoutView(new URLSearchParams(raw).toString())} canAct={abilitiesOf(person.role).act} />
    </main>
  );
}
