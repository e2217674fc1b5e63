"use client";

import type { QueryKey } from "@tanstack/react-query";
import type { z } from "zod";
import { useLiveQuery } from "@/lib/browser/use-live-query";

/**
 * An admin list (tokens, people, webhooks): the server's rows first, refetched after this
 * page's own changes (no ledger stream: these change only by what an admin sends).
 * `loadedAt` (ms): when the server read `initial`; the list's `dataUpdatedAt` starts there,
 * so ages measured from it read the same on the server and in the browser.
 */
export function useAdminList<T>({ queryKey, url, schema, what, initial, loadedAt }: { queryKey: QueryKey; url: string; schema: z.ZodType<T[]>; what: string; initial: T[]; loadedAt: number }) {
  const query = useLiveQuery({ queryKey, url, schema, what, initialData: initial, initialDataUpdatedAt: loadedAt, followLedger: false });
  return { ...query, data: query.data ?? initial };
}
