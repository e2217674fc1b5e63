import "server-only";
import { z } from "zod";
import { BatonError } from "../core/errors";
import { errorResponse } from "../http/respond";
import type { LedgerEventDto } from "./ledger";
import { ledgerFeedReady, ledgerFeedStatus, subscribeLedger } from "./ledger-feed";
import { authoriseRead, type Reader } from "../auth/read-access";
import { holdReader, readerIdentity, type ReaderHold } from "../auth/reader-checks";
import { singleton } from "../core/singleton";

/**
 * GET /api/v1/stream: server-sent events of the ledger, resumed from `Last-Event-ID`, else
 * `?after=`; its frames and limits are in docs/http-api.md#the-live-stream.
 */

export const MAX_STREAMS_PER_PROCESS = 1_000;
export const STREAM_RETRY_MS = 2_000;
export const HEARTBEAT_INTERVAL_MS = 15_000;
/** Chunks a client may leave unread before its stream is closed (it then reconnects and catches up). */
export const MAX_QUEUED_CHUNKS = 2_000;

const seqText = z
  .string()
  .regex(/^\d{1,15}$/, "must be a ledger seq: a whole number, 0 or more")
  .transform(Number);

/** `?after=<seq>`; the Last-Event-ID header wins over it. */
export const streamQuerySchema = z.object({ after: seqText.optional() });

function badCursor(field: string, issues: z.ZodError["issues"]): BatonError {
  const fields = issues.map((issue) => ({ field, problem: issue.message }));
  return new BatonError("invalid_request", `Bad ${field}: ${fields.map((f) => f.problem).join("; ")}.`, { fields });
}

/** The seq to resume after, or null for "from now on"; 400 for a malformed one. */
export function streamCursor(request: Request): number | null {
  const lastEventId = request.headers.get("last-event-id");
  if (lastEventId !== null && lastEventId !== "") {
    const parsed = seqText.safeParse(lastEventId);
    if (!parsed.success) throw badCursor("Last-Event-ID", parsed.error.issues);
    return parsed.data;
  }
  const parsed = streamQuerySchema.safeParse(Object.fromEntries(new URL(request.url).searchParams));
  if (!parsed.success) throw badCursor("after", parsed.error.issues);
  return parsed.data.after ?? null;
}

export function ledgerMessage(event: LedgerEventDto): string {
  // JSON.stringify escapes line breaks, so the data is always one line.
  return `id: ${event.seq}\nevent: ledger\ndata: ${JSON.stringify(event)}\n\n`;
}

/** A live batch reaches every stream as the same array: its frames are written out once for all of them. */
const batchMessages = new WeakMap<readonly LedgerEventDto[], string>();

/** The `event: ledger` frames of a batch. */
export function ledgerMessages(events: readonly LedgerEventDto[]): string {
  let text = batchMessages.get(events);
  if (text === undefined) {
    text = events.map(ledgerMessage).join("");
    batchMessages.set(events, text);
  }
  return text;
}

export function resetMessage(seq: number): string {
  return `id: ${seq}\nevent: reset\ndata: ${JSON.stringify({ seq })}\n\n`;
}

export function readyMessage(seq: number): string {
  return `id: ${seq}\nevent: ready\ndata: ${JSON.stringify({ seq })}\n\n`;
}

const openStreams = singleton("OpenStreams", () => ({ count: 0 }));

/** Streams open in this process. */
export function openStreamCount(): number {
  return openStreams.count;
}

const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
};

/** Authorises the reader (lib/auth/read-access.ts), then streams to them. */
export async function handleStreamRequest(request: Request): Promise<Response> {
  let reader: Reader;
  try {
    reader = await authoriseRead(request);
  } catch (error) {
    return errorResponse(error);
  }
  return streamLedger(request, reader);
}

/**
 * Frames made from each batch of events (the board's deltas, lib/board/board-delta.ts): sent
 * after the batch's own frames, in batch order, and shared by streams that ask alike.
 */
export type StreamFrames = (events: LedgerEventDto[]) => Promise<string>;

/** Streams the ledger to an authorised reader (the route's wrapper authorises them), with `frames` after each batch. */
export async function streamLedger(request: Request, reader: Reader, frames?: StreamFrames): Promise<Response> {
  // Until the stream opens, a lost access (a check during the wait for the feed) only marks it.
  const pending: { revoked: BatonError | null } = { revoked: null };
  let hold: ReaderHold | undefined;
  let opened: { end: (error: BatonError) => void } | undefined;
  try {
    const after = streamCursor(request);
    // The reader's own cap first (429), so that one reader cannot fill the process's (503).
    hold = holdReader(readerIdentity(request, reader), "stream", (error) => (opened ? opened.end(error) : (pending.revoked = error)));
    if (openStreams.count >= MAX_STREAMS_PER_PROCESS) {
      throw new BatonError("unavailable", "Too many live streams are open on this server; retry shortly.", null, 5);
    }
    await ledgerFeedReady({ caughtUp: true });
    if (pending.revoked) throw pending.revoked;
    const stream = openStream(request, after, hold, frames);
    opened = stream;
    return stream.response;
  } catch (error) {
    if (!opened) hold?.release();
    return errorResponse(error);
  }
}

function openStream(
  request: Request,
  after: number | null,
  hold: ReaderHold,
  frames: StreamFrames | undefined,
): { response: Response; end: (error: BatonError) => void } {
  const encoder = new TextEncoder();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let closed = false;
  let unsubscribe: (() => void) | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  // Each batch's derived frames wait for the previous batch's, so they arrive in order.
  let derived: Promise<void> = Promise.resolve();

  // Every way out comes here, once: the client went away (abort, cancel), it
  // stopped reading, the subscription failed, or the reader lost its access.
  const close = () => {
    if (closed) return;
    closed = true;
    openStreams.count--;
    hold.release();
    clearInterval(heartbeat);
    request.signal.removeEventListener("abort", close);
    unsubscribe?.();
    try {
      controller.close();
    } catch {
      // Already cancelled or errored.
    }
  };

  const send = (text: string) => {
    if (closed) return;
    try {
      controller.enqueue(encoder.encode(text));
    } catch {
      close();
      return;
    }
    // A client that stops reading would otherwise grow this queue without end.
    if ((controller.desiredSize ?? 0) < -MAX_QUEUED_CHUNKS) close();
  };

  // `start` runs during construction, so the controller exists from here on.
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    cancel() {
      close();
    },
  });
  openStreams.count++;

  send(`retry: ${STREAM_RETRY_MS}\n\n`);
  // The replay (delivered while subscribing) goes out at once, before `ready`, which a client takes as its cursor.
  let live = false;
  try {
    // One chunk per batch: fewer writes, and the queue limit counts batches.
    unsubscribe = subscribeLedger(
      after,
      (events) => {
        const messages = ledgerMessages(events);
        if (!frames) return send(messages);
        const sentNow = !live;
        if (sentNow) send(messages);
        // A live batch and its derived frames go out as one write, in batch order.
        derived = derived
          .then(() => (closed ? "" : frames(events)))
          .catch((error: unknown) => {
            console.error("baton: live stream: a derived frame failed", error);
            return "";
          })
          .then((text) => {
            const chunk = sentNow ? text : messages + text;
            if (chunk) send(chunk);
          });
      },
      (seq) => send(resetMessage(seq)),
    );
  } catch (error) {
    close();
    throw error;
  }
  live = true;
  // Synchronously after subscribing: the seq this stream continues from.
  send(readyMessage(ledgerFeedStatus().seq ?? 0));
  if (closed) {
    // It closed while subscribing (before `unsubscribe` was set).
    unsubscribe();
  } else {
    heartbeat = setInterval(() => send(": keep-alive\n\n"), HEARTBEAT_INTERVAL_MS);
    heartbeat.unref();
    if (request.signal.aborted) close();
    else request.signal.addEventListener("abort", close, { once: true });
  }
  // The reader lost its access (lib/auth/reader-checks.ts): say why in a comment, then end
  // cleanly; EventSource reconnects after `retry` and is refused with the same error.
  const end = (error: BatonError) => {
    send(`: ${error.code}: ${error.message.replace(/[\r\n]+/g, " ")}\n\n`);
    close();
  };
  return { response: new Response(body, { status: 200, headers: SSE_HEADERS }), end };
}
