"use client";

import { keepPreviousData, useQuery, useQueryClient, type QueryKey } from "@tanstack/react-query";
import { useCallback } from "react";
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
}

/**
 * A live view's data (docs/decisions/033-component-layer.md): fetched and parsed with its
 * schema, shown from the server's render first, and refetched when the ledger moves.
 * Returns the query, `reload` (invalidate and refetch now) and the stream's state.
 */
export function useLiveQuery<T>(options: UseLiveQueryOptions<T>) {
  const { queryKey, url, schema, what, gapFor, followLedger = true, alsoRefresh = [] } = options;
  const queryClient = useQueryClient();
  const query = useQuery<T, Error, T>({
    queryKey,
    queryFn: () => fetchParsed(url, schema, what, options.revalidate ? queryClient.getQueryData<T>(queryKey) : undefined),
    initialData: options.initialData,
    initialDataUpdatedAt: options.initialDataUpdatedAt,
    placeholderData: options.keepPrevious ? keepPreviousData : undefined,
    refetchInterval: options.refetchInterval,
  });
  const prefix = queryKey[0];
  // A fetch already under way may have started before the event: invalidating cancels and restarts it.
  const reload = useCallback(() => queryClient.invalidateQueries({ queryKey: [prefix] }), [queryClient, prefix]);
  const live = useLedgerRefresh([{ refresh: () => void reload(), gapFor }, ...alsoRefresh], followLedger);
  return { ...query, reload, live };
}
