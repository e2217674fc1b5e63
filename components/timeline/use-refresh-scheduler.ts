"use client";

import { useCallback, useEffect, useRef } from "react";

/**
 * Schedules `refresh` at most once per `minGapMs` (given per call, so a busy
 * ledger of heartbeats can wait longer than a new packet): an earlier pending
 * refresh is kept, a later one is brought forward, and the last call is always followed.
 */
export function useRefreshScheduler(refresh: () => void): (minGapMs: number) => void {
  const last = useRef(0);
  const pending = useRef<{ at: number; timer: ReturnType<typeof setTimeout> } | null>(null);
  // Clears a pending refresh timer when the component unmounts.
  useEffect(
    () => () => {
      if (pending.current) clearTimeout(pending.current.timer);
    },
    [],
  );
  return useCallback(
    (minGapMs: number) => {
      const now = Date.now();
      const at = Math.max(now, last.current + minGapMs);
      if (pending.current && pending.current.at <= at) return;
      if (pending.current) clearTimeout(pending.current.timer);
      pending.current = {
        at,
        timer: setTimeout(() => {
          pending.current = null;
          last.current = Date.now();
          refresh();
        }, at - now),
      };
    },
    [refresh],
  );
}
