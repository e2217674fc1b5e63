"use client";

import { keepPreviousData, useQuery, useQueryClient, type QueryKey } from "@tanstack/react-query";
import { useCallback, useRef } from "react";
import type { z } from "zod";
import type { LedgerEventDto } from "../events/dto";
import { fetchParsed } from "./fetch-parsed";
import { useLedgerRefresh, type LedgerRefreshRule } from "./use-ledger-refresh";

export interface UseLiveQueryOptions<T> {
  /** Its first entry is the prefix a ledger event invalidates (every filter's copy at once). */
  queryKey: QueryKey;
  url: string;
  /** The answer's schema: nothing unchecked reaches the page. */
  schema: z.ZodType<T>;
  /** Names it in the error shown ("the board"). */
  what: string;
  /** What the server rendered, when it is for this query (same filters). */
  initialData?: T;
  /** When `initialData` was made (ms); 0 makes it stale at once (a partial first paint). */
  initialDataUpdatedAt?: number;
  /** Keeps showing the previous filters' data while new ones load. */
  keepPrevious?: boolean;
  refetchInterval?: number;
  /** The URL answers with an ETag: refetches send If-None-Match and keep the data on 304 (fetch-parsed.ts). */
  revalidate?: boolean;
  /** How ledger events refresh it (LedgerRefreshRule.gapFor; default: every event, throttled). */
  gapFor?: (events: LedgerEventDto[]) => number | null;
  /**
   * False opens no stream: the data changes only by what this page sends (the admin lists),
   * or another component on the page follows the ledger for the same key (the inbox's count).
   */
  followLedger?: boolean;
  /** More of the page to refresh on the same stream (the timeline's feed). */
  alsoRefresh?: LedgerRefreshRule[];
  /**
   * The server sends this view's changes over the stream (docs/decisions/064-board-deltas.md):
   * ledger events then refetch nothing; each delta is applied to the cached data. `apply`
   * returns null when it cannot be applied (the view is then refetched).
   */
  deltas?: {
    streamUrl: string;
    apply: (data: T, delta: unknown) => T | null;
    /** Called with each delta and the data it is applied to (before it is): other caches the same delta updates (the timeline's feed). */
    alsoApply?: (delta: unknown, held: T | undefined) => void;
  };
}

/**
 * A live view's data (docs/decisions/033-component-layer.md): fetched and parsed with its
 * schema, shown from the server's render first, and refetched when the ledger moves.
 * Returns the query, `reload` (invalidate and refetch now) and the stream's state.
 */
export function useLiveQuery<T>(options: UseLiveQueryOptions<T>) {
  const { queryKey, url, schema, what, gapFor, followLedger = true, alsoRefresh = [], deltas } = options;
  const queryClient = useQueryClient();
  // Each fetch under way collects the deltas that arrive meanwhile: its data may predate them, so they are applied to it again.
  const fetches = useRef(new Set<unknown[]>());
  const query = useQuery<T, Error, T>({
    queryKey,
    queryFn: async () => {
      const arrived: unknown[] = [];
      fetches.current.add(arrived);
      let fetched: T;
      try {
        fetched = await fetchParsed(url, schema, what, options.revalidate ? queryClient.getQueryData<T>(queryKey) : undefined);
      } finally {
        fetches.current.delete(arrived);
      }
      if (!deltas || !arrived.length) return fetched;
      let data: T | null = fetched;
      for (const delta of arrived) data = data === null ? null : deltas.apply(data, delta);
      // A delta that cannot be applied asks for another fetch; this one's data is shown meanwhile.
      if (data === null) setTimeout(() => void queryClient.invalidateQueries({ queryKey }), 0);
      return data ?? fetched;
    },
    initialData: options.initialData,
    initialDataUpdatedAt: options.initialDataUpdatedAt,
    placeholderData: options.keepPrevious ? keepPreviousData : undefined,
    refetchInterval: options.refetchInterval,
  });
  const prefix = queryKey[0];
  // A fetch already under way may have started before the event: invalidating cancels and restarts it.
  const reload = useCallback(() => queryClient.invalidateQueries({ queryKey: [prefix] }), [queryClient, prefix]);
  const onDelta = (delta: unknown) => {
    if (!deltas) return;
    for (const arrived of fetches.current) arrived.push(delta);
    const held = queryClient.getQueryData<T>(queryKey);
    deltas.alsoApply?.(delta, held);
    const next = held === undefined ? null : deltas.apply(held, delta);
    if (next !== null) queryClient.setQueryData<T>(queryKey, next);
    // A fetch under way applies it again when it ends (and asks for another if it still cannot).
    else if (!fetches.current.size) void reload();
  };
  const live = useLedgerRefresh(
    // With deltas every batch is answered by its delta: events alone refetch nothing.
    [{ refresh: () => void reload(), gapFor: deltas ? () => null : gapFor }, ...alsoRefresh],
    followLedger,
    deltas ? { url: deltas.streamUrl, onDelta } : undefined,
  );
  return { ...query, reload, live };
}
