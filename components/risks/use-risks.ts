"use client";

import { useLiveQuery } from "@/lib/browser/use-live-query";
import { withQuery } from "@/lib/browser/fetch-parsed";
import { riskListDto, type RiskListDto } from "@/lib/views/risks/dto";

/**
 * The risks list for the URL's filters: as the server rendered it, then as
 * refetched whenever the ledger moves (a packet, a triage anywhere).
 */
export function useRisks(search: string, initial: { list: RiskListDto; search: string }) {
  const first = search === initial.search;
  return useLiveQuery({
    queryKey: ["risks", search],
    url: withQuery("/api/v1/risks", search),
    schema: riskListDto,
    what: "the risks",
    initialData: first ? initial.list : undefined,
    initialDataUpdatedAt: first ? Date.parse(initial.list.generated_at) : undefined,
    keepPrevious: true,
  });
}
