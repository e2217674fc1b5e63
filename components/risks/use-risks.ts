"use client";

import { useThrottledRefresh } from "@/lib/live/use-throttled-refresh";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback } from "react";
import { useLedgerStream, type LedgerStreamStatus } from "@/lib/live/use-ledger-stream";
import { riskListDto, type RiskListDto } from "@/lib/risks/dto";

/** The react-query key prefix of the risks list (one entry per filter string). */
export const RISKS_QUERY_KEY = ["risks"] as const;

async function fetchRisks(search: string): Promise<RiskListDto> {
  const response = await fetch(`/api/v1/risks${search ? `?${search}` : ""}`, { headers: { accept: "application/json" }, credentials: "same-origin" });
  if (!response.ok) throw new Error(`the risks could not be loaded (HTTP ${response.status})`);
  return riskListDto.parse(await response.json());
}


/**
 * The risks list for the URL's filters: as the server rendered it, then as
 * refetched whenever the ledger moves (a packet, a triage anywhere).
 */
export function useRisks(search: string, initial: { list: RiskListDto; search: string }) {
  const queryClient = useQueryClient();
  const query = useQuery({
    queryKey: [...RISKS_QUERY_KEY, search],
    queryFn: () => fetchRisks(search),
    initialData: search === initial.search ? initial.list : undefined,
    initialDataUpdatedAt: search === initial.search ? Date.parse(initial.list.generated_at) : undefined,
    placeholderData: (previous) => previous,
  });
  // A fetch already under way may have started before the event: invalidating cancels and restarts it.
  const reload = useCallback(() => queryClient.invalidateQueries({ queryKey: RISKS_QUERY_KEY }), [queryClient]);
  const refresh = useThrottledRefresh(useCallback(() => void reload(), [reload]));
  const live: LedgerStreamStatus = useLedgerStream({ url: "/api/v1/stream", onEvents: refresh, onReset: refresh });
  return { ...query, reload, live };
}
