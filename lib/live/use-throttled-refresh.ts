"use client";

import { useCallback, useEffect, useRef } from "react";

/** How often a busy ledger may refetch a live view: at most twice a second, the last event always followed. */
export const REFRESH_EVERY_MS = 500;

/** Wraps a refetch so that a burst of ledger events causes one refetch per interval, never dropping the last. */
export function useThrottledRefresh(refresh: () => void): () => void {
  const last = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  // Clears a pending refresh timer when the view unmounts.
  useEffect(() => () => {
    if (timer.current) clearTimeout(timer.current);
  }, []);
  return useCallback(() => {
    if (timer.current) return;
    const wait = Math.max(0, last.current + REFRESH_EVERY_MS - Date.now());
    timer.current = setTimeout(() => {
      timer.current = null;
      last.current = Date.now();
      refresh();
    }, wait);
  }, [refresh]);
}
