"use client";

import { inboxDto, type InboxDto } from "@/lib/views/questions/dto";
import { useLiveQuery } from "@/lib/browser/use-live-query";
import { applyInboxDelta } from "@/lib/browser/inbox-delta";

/** The react-query key of the questions inbox: the list and the heading's count share it. */
export const INBOX_QUERY_KEY = ["questions"] as const;

/**
 * The inbox as the server rendered it, then as refetched. `loadedAt` (ms) is when the
 * shown data was made: the server's time at first, so ages render the same on the server
 * and in the browser. `followLedger`: whether this component keeps it live (the list
 * does; the heading's count shares its key and needs no stream of its own).
 */
export function useInbox(initialInbox: InboxDto, loadedAt: number, followLedger = true) {
  const query = useLiveQuery({
    queryKey: INBOX_QUERY_KEY,
    url: "/api/v1/questions",
    schema: inboxDto,
    what: "the questions",
    initialData: initialInbox,
    initialDataUpdatedAt: loadedAt,
    followLedger,
    // The server sends the changed threads' questions: events refetch nothing (docs/decisions/064-board-deltas.md).
    deltas: { streamUrl: "/api/v1/stream?questions=", apply: applyInboxDelta },
  });
  return { ...query, data: query.data ?? initialInbox };
}
