"use client";

import type { QueryKey } from "@tanstack/react-query";
import type { z } from "zod";
import { useLiveQuery } from "@/lib/browser/use-live-query";

/**
 * An admin list (tokens, people, webhooks): the server's rows first, refetched after this
 * page's own changes (no ledger stream: these change only by what an admin sends).
 */
export function useAdminList<T>({ queryKey, url, schema, what, initial }: { queryKey: QueryKey; url: string; schema: z.ZodType<T[]>; what: string; initial: T[] }) {
  const query = useLiveQuery({ queryKey, url, schema, what, initialData: initial, followLedger: false });
  return { ...query, data: query.data ?? initial };
}
