"use client";

import { useRouter } from "next/navigation";
import { useCallback } from "react";
import type { LedgerEventDto } from "@/lib/ledger/dto";
import { useLedgerStream } from "@/lib/live/use-ledger-stream";

/** Re-renders the thread page from the server when its thread's ledger moves. */
export function ThreadLive({ threadKey }: { threadKey: string }) {
  const router = useRouter();
  const onEvents = useCallback(
    (events: LedgerEventDto[]) => {
      if (events.some((event) => event.thread_key === threadKey)) router.refresh();
    },
    [router, threadKey],
  );
  const refresh = useCallback(() => router.refresh(), [router]);
  useLedgerStream({ url: "/api/v1/stream", onEvents, onReset: refresh });
  return null;
}
