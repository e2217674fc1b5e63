"use client";

import { useQuery } from "@tanstack/react-query";
import { inboxDto, type InboxDto } from "@/lib/human/inbox-dto";

/** The react-query key of the questions inbox: the list and the heading's count share it. */
export const INBOX_QUERY_KEY = ["questions"] as const;

async function fetchInbox(): Promise<InboxDto> {
  const response = await fetch("/api/v1/questions", { headers: { accept: "application/json" }, credentials: "same-origin" });
  if (!response.ok) throw new Error(`the questions could not be loaded (HTTP ${response.status})`);
  return inboxDto.parse(await response.json());
}

/**
 * The inbox as the server rendered it, then as refetched. `loadedAt` (ms) is
 * when the shown data was made: the server's time at first, so ages render
 * the same on the server and in the browser.
 */
export function useInbox(initialInbox: InboxDto, loadedAt: number) {
  return useQuery({
    queryKey: INBOX_QUERY_KEY,
    queryFn: fetchInbox,
    initialData: initialInbox,
    initialDataUpdatedAt: loadedAt,
  });
}
