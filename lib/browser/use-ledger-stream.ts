"use client";

import { useEffect, useEffectEvent, useRef, useState } from "react";
import type { LedgerEventDto } from "../events/dto";
import { DEFAULT_STREAM_URL, reconnectDelay, streamUrl } from "./stream-client";

export type LedgerStreamStatus = "connecting" | "open" | "reconnecting" | "off";

export interface UseLedgerStreamOptions {
  /**
   * The stream's URL (GET /api/v1/stream by default). A browser's EventSource
   * cannot send an Authorization header, so the hook sends no token: it
   * relies on what the browser sends by itself: the session cookie
   * (docs/decisions/013-accounts-and-sessions.md).
   */
  url?: string;
  /** New ledger events, in seq order, each once (batched over a few milliseconds). */
  onEvents: (events: LedgerEventDto[]) => void;
  /** The stream could not tell what was missed: refetch everything. */
  onReset?: () => void;
  /** A view's change the server computed for a batch (`event: delta`, asked for in `url`), unparsed: the view checks it. */
  onDelta?: (data: unknown) => void;
  /** False closes the stream (default true). */
  enabled?: boolean;
}

/** Events arriving this close together reach `onEvents` as one batch (a replay, a busy moment). */
const BATCH_WINDOW_MS = 50;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function seqOf(value: unknown): number | null {
  const seq = (value as { seq?: unknown } | null)?.seq;
  return typeof seq === "number" && Number.isSafeInteger(seq) && seq >= 0 ? seq : null;
}

/**
 * Follows the ledger's server-sent events, reconnecting with backoff and resuming after the
 * last seq seen; returns the connection's state (docs/decisions/010-live-updates.md).
 */
export function useLedgerStream({
  url = DEFAULT_STREAM_URL,
  onEvents,
  onReset,
  onDelta,
  enabled = true,
}: UseLedgerStreamOptions): LedgerStreamStatus {
  const [status, setStatus] = useState<Exclude<LedgerStreamStatus, "off">>("connecting");
  // Survives reconnects and re-runs of the effect: the cursor to resume from.
  const lastSeq = useRef<number | null>(null);
  // The latest callbacks, without reconnecting when the caller passes new ones.
  const deliverEvents = useEffectEvent((events: LedgerEventDto[]) => onEvents(events));
  const deliverReset = useEffectEvent(() => onReset?.());
  const deliverDelta = useEffectEvent((data: unknown) => onDelta?.(data));

  useEffect(() => {
    // Synchronises this component with an EventSource on `url`: opens it,
    // reopens it with backoff (resuming after the last seq) when it drops, and
    // closes it when the component unmounts, `url` changes or `enabled` turns false.
    if (!enabled) return;
    let source: EventSource | null = null;
    let retryTimer: ReturnType<typeof setTimeout> | undefined;
    let flushTimer: ReturnType<typeof setTimeout> | undefined;
    let attempt = 0;
    let pending: LedgerEventDto[] = [];

    const flush = () => {
      flushTimer = undefined;
      const batch = pending;
      pending = [];
      if (batch.length) deliverEvents(batch);
    };

    const connect = () => {
      retryTimer = undefined;
      const current = new EventSource(streamUrl(url, lastSeq.current));
      source = current;

      current.addEventListener("ledger", (message) => {
        const event = parseJson(message.data) as LedgerEventDto | null;
        const seq = seqOf(event);
        // A seq already seen (a replay overlapping what arrived before a drop) is skipped.
        if (seq === null || (lastSeq.current !== null && seq <= lastSeq.current)) return;
        lastSeq.current = seq;
        pending.push(event!);
        flushTimer ??= setTimeout(flush, BATCH_WINDOW_MS);
      });

      current.addEventListener("reset", (message) => {
        const seq = seqOf(parseJson(message.data));
        if (seq === null) return;
        // Everything is refetched: events still waiting for the batch are moot.
        lastSeq.current = seq;
        pending = [];
        clearTimeout(flushTimer);
        flushTimer = undefined;
        deliverReset();
      });

      // Sent after its batch's ledger events; applied at once (the view keeps its own order).
      current.addEventListener("delta", (message) => deliverDelta(parseJson(message.data)));

      // After the catch-up: live from `seq`, which is where a reconnect resumes.
      current.addEventListener("ready", (message) => {
        const seq = seqOf(parseJson(message.data));
        if (seq !== null) lastSeq.current = seq;
        attempt = 0;
        setStatus("open");
      });

      current.onerror = () => {
        // The browser retries some failures by itself, but not an HTTP error
        // (401, 503) and never with backoff: close it and reconnect ourselves.
        current.close();
        if (source !== current) return;
        source = null;
        setStatus("reconnecting");
        retryTimer = setTimeout(connect, reconnectDelay(attempt++));
      };
    };

    connect();
    return () => {
      clearTimeout(retryTimer);
      clearTimeout(flushTimer);
      source?.close();
      source = null;
    };
  }, [url, enabled]);

  return enabled ? status : "off";
}
