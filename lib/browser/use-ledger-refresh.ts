"use client";

import { useEffect, useRef } from "react";
import type { LedgerEventDto } from "../events/dto";
import { useLedgerStream, type LedgerStreamStatus } from "./use-ledger-stream";
import { REFRESH_EVERY_MS, RefreshScheduler } from "./refresh-scheduler";

export interface LedgerRefreshRule {
  /** Refetches what the view shows (invalidates its queries, or refreshes the server-rendered page). */
  refresh: () => void;
  /**
   * How soon a batch of ledger events refreshes it: the least time since its last refresh,
   * or null when these events do not concern it. Default: every event, REFRESH_EVERY_MS.
   */
  gapFor?: (events: LedgerEventDto[]) => number | null;
}

const EVERY_EVENT = () => REFRESH_EVERY_MS;

/**
 * Keeps a view in step with the ledger over one stream: each rule's refresh runs at most
 * once per its gap, the last event always followed; when the stream cannot tell what was
 * missed (a reset) every rule refreshes at once. The rules' count must not change.
 * `enabled: false` opens no stream. Returns the stream's state, for display.
 */
export function useLedgerRefresh(
  rules: LedgerRefreshRule[],
  enabled = true,
  /** A stream URL asking for a view's deltas, and what receives them (use-live-query.ts). */
  deltas?: { url: string; onDelta: (data: unknown) => void },
): LedgerStreamStatus {
  const latest = useRef(rules);
  const schedulers = useRef<RefreshScheduler[]>([]);
  // The schedulers call the latest rules, without being re-made when the caller passes new ones.
  useEffect(() => {
    latest.current = rules;
  });
  // Synchronises one scheduler per rule with this component's life: their timers stop when it unmounts.
  useEffect(() => {
    const made = latest.current.map((_, index) => new RefreshScheduler(() => latest.current[index]?.refresh()));
    schedulers.current = made;
    return () => made.forEach((scheduler) => scheduler.cancel());
  }, [rules.length]);

  return useLedgerStream({
    enabled,
    url: deltas?.url,
    onDelta: deltas?.onDelta,
    onEvents: (events) =>
      latest.current.forEach((rule, index) => {
        const gap = (rule.gapFor ?? EVERY_EVENT)(events);
        if (gap !== null) schedulers.current[index]?.schedule(gap);
      }),
    onReset: () => schedulers.current.forEach((scheduler) => scheduler.schedule(0)),
  });
}

/** The stream's state in a word or two, for a view's status line. */
export function describeLive(status: LedgerStreamStatus): string {
  return status === "open" ? "live" : status === "connecting" ? "connecting…" : status === "off" ? "not live" : "reconnecting…";
}
