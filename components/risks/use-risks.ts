"use client";

import { keepPreviousData, useInfiniteQuery, useQueryClient, type InfiniteData } from "@tanstack/react-query";
import { useCallback, useMemo } from "react";
import { fetchParsed, withQuery } from "@/lib/browser/fetch-parsed";
import { applyRisksDelta, RISKS_RESYNC_MS } from "@/lib/browser/risks-delta";
import { useLedgerRefresh } from "@/lib/browser/use-ledger-refresh";
import { riskListDto, type RiskListDto } from "@/lib/views/risks/dto";

type Pages = InfiniteData<RiskListDto, unknown>;

/** The pages loaded so far as one list: a group that moved between two pages' reads is listed once. */
function joined(data: Pages): RiskListDto {
  const first = data.pages[0]!;
  const seen = new Set<string>();
  const groups = data.pages.flatMap((page) => page.groups).filter((group) => !seen.has(group.fingerprint) && !!seen.add(group.fingerprint));
  return { ...first, groups, next_cursor: data.pages.at(-1)!.next_cursor };
}

/**
 * The risks list for the URL's filters and order, a page at a time (GET /api/v1/risks pages by
 * cursor): as the server rendered its first page, then kept live by the stream's deltas (the
 * changed groups, docs/decisions/059-risks-deltas.md) applied to the pages loaded so far; every
 * loaded page is read again when a delta cannot be applied, on a stream reset and every
 * RISKS_RESYNC_MS. `loadMore` adds the next page.
 */
export function useRisks(search: string, initial: { list: RiskListDto; search: string }) {
  const first = search === initial.search;
  const queryClient = useQueryClient();
  const queryKey = useMemo(() => ["risks", search], [search]);
  const query = useInfiniteQuery({
    queryKey,
    queryFn: ({ pageParam }) => fetchParsed(withQuery("/api/v1/risks", search, pageParam ? { cursor: pageParam } : undefined), riskListDto, "the risks"),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_cursor,
    initialData: first ? { pages: [initial.list], pageParams: [null] } : undefined,
    initialDataUpdatedAt: first ? Date.parse(initial.list.generated_at) : undefined,
    placeholderData: keepPreviousData,
    refetchInterval: RISKS_RESYNC_MS,
  });
  // A fetch already under way may have started before the event: invalidating cancels and restarts it.
  const reload = useCallback(() => queryClient.invalidateQueries({ queryKey: ["risks"] }), [queryClient]);
  const onDelta = (frame: unknown) => {
    const held = queryClient.getQueryData<Pages>(queryKey);
    // Pages being read may predate the change: they are read again instead.
    const pages = held && !queryClient.isFetching({ queryKey }) ? applyRisksDelta(held.pages, frame) : null;
    if (held && pages) queryClient.setQueryData<Pages>(queryKey, { ...held, pages });
    else void reload();
  };
  const live = useLedgerRefresh([{ refresh: () => void reload(), gapFor: () => null }], true, {
    url: `/api/v1/stream?risks=${encodeURIComponent(search)}`,
    onDelta,
  });
  const data = useMemo(() => (query.data ? joined(query.data) : undefined), [query.data]);
  const { fetchNextPage } = query;
  const loadMore = useCallback(() => void fetchNextPage(), [fetchNextPage]);
  return { data, error: query.error, reload, live, hasMore: query.hasNextPage, loadingMore: query.isFetchingNextPage, loadMore };
}
