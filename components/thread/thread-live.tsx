"use client";

import { useRouter } from "next/navigation";
import { REFRESH_EVERY_MS } from "@/lib/browser/refresh-scheduler";
import { useLedgerRefresh } from "@/lib/browser/use-ledger-refresh";

/** Re-renders the thread page from the server when its thread's ledger moves (at most twice a second). */
export function ThreadLive({ threadKey }: { threadKey: string }) {
  const router = useRouter();
  useLedgerRefresh([
    {
      refresh: () => router.refresh(),
      gapFor: (events) => (events.some((event) => event.thread_key === threadKey) ? REFRESH_EVERY_MS : null),
    },
  ]);
  return null;
}
