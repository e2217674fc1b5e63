import type { Metadata } from "next";
import { RisksClient } from "@/components/risks/risks-client";
import { filtersFromAddress, IgnoredFilters, type SearchParams } from "@/components/shared/address-filters";
import { requirePagePerson } from "@/lib/auth/page-person";
import { abilitiesOf } from "@/lib/auth/roles";
import { RISK_PAGE_DEFAULT, riskFiltersSchema } from "@/lib/views/risks/filters";
import { listRisks } from "@/lib/views/risks/queries";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Risks" };

/**
 * The risks triage list (docs/product.md#risks): every risk of every active packet,
 * grouped by fingerprint, regressed first, then by severity; triaged in place,
 * one at a time or in bulk, and kept live in the browser.
 */
export default async function RisksPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const person = await requirePagePerson("/risks");
  const { raw, parsed } = filtersFromAddress(await searchParams, riskFiltersSchema);
  // The first page; the browser asks for the next ones on demand.
  const list = await listRisks({ ...(parsed.success ? parsed.data : {}), limit: RISK_PAGE_DEFAULT });
  return (
    <main id="main" className="mx-auto w-full max-w-7xl flex-1 space-y-4 overflow-y-auto p-4">
      <h1 className="text-2xl font-bold">Risks</h1>
      <IgnoredFilters parsed={parsed} />
      <RisksClient initialList={list} initialSearch={new URLSearchParams(raw).toString()} canAct={abilitiesOf(person.role).act} />
    </main>
  );
}
