/**
 * The sustained load of bench:viewers, sent from a thread of the viewers' process: packets to
 * POST /api/v1/packets and heartbeats to POST /api/v1/threads/{key}/events, each sent when due
 * (open-loop: a slow answer does not delay the next request), and for each packet the time
 * from its 201 until every viewer's board shows its next_action.
 */

import { Worker } from "node:worker_threads";

/** A request for ./sender-thread.mjs, and its answer. */
interface SendRequest {
  id: number;
  url: string;
  token: string;
  body: unknown;
  /** Wall clock (ms) when it is due; sent at once without. */
  due?: number;
}

interface SendResult {
  id: number;
  /** Request to answer read, on the sender's thread. */
  ms: number;
  /** HTTP status, or 0 when the request failed. */
  status: number;
  /** The answer's first 300 characters (a heartbeat's `recorded` among them), or the failure. */
  text: string;
  /** Wall clock (ms) when sent, and when its answer was read. */
  sent: number;
  at: number;
}

/** A viewer as the load sees it: an HTTP one (./viewer-clients.ts) or a Chromium page (./browser-viewers.ts). */
export interface WatchingViewer {
  kind: "http" | "browser";
  bytes: number;
  seen: Map<string, number>;
  /** Whether its board shows this thread (a Chromium viewer's board is filtered to a few). */
  wants(key: string): boolean;
}

export interface LoadRequest {
  /** One per server instance: packets and heartbeats go to them in turn. */
  bases: string[];
  packetToken: string;
  heartbeatToken: string;
  keys: string[];
  /** The Chromium viewers' threads: every `browserEvery`th packet goes to one of them. */
  browserKeys: string[];
  /** Their project, which their packets keep (the Chromium boards are filtered to it). */
  browserProject: string;
  browserEvery: number;
  packetsPerSecond: number;
  heartbeatsPerSecond: number;
  seconds: number;
  /** Numbers the packets' next actions from here, so that no two rows share one. */
  firstSerial: number;
  /** A viewer whose board does not show a packet's next action this long after its 201 never does. */
  neverAfterMs: number;
}

export interface LoadResult {
  packets: number;
  heartbeats: number;
  /** Requests answered with another status than the route's success (201 for packets, 200 for heartbeats) or not answered. */
  packetErrors: number;
  heartbeatErrors: number;
  /** Heartbeats whose answer said they were recorded in the ledger (once a minute per thread, and the first after a packet). */
  recordedHeartbeats: number;
  firstError: string | null;
  /** Request to answer, ms, sorted. */
  ingestMs: number[];
  /** The same answers as this (the viewers') event loop got to them: how ingest was timed before 2026-12-04, sorted. */
  ingestMsOnViewersLoop: number[];
  heartbeatMs: number[];
  /** Per viewer and packet: ms from the 201 until that board showed its next action (0 when it did before the 201 reached the sender), sorted. */
  latencies: number[];
  /** Viewer-packets whose next action that board never showed within neverAfterMs. */
  never: number;
  /** Per viewer and packet: ms from sending the packet until that board showed its next action, sorted. */
  fromSend: number[];
  /** The same for the Chromium viewers, over the packets sent to their threads. */
  browserLatencies: number[];
  browserNever: number;
  /** Bytes all HTTP viewers received while the load was sent. */
  bytes: number;
  /** How late the sender was at most, ms: when large the load was not sent at the asked rate. */
  maxLagMs: number;
}

/** The sender's warm-up: this many requests at once, this many times, per server. */
const WARM_UP_CONNECTIONS = 8;
const WARM_UP_ROUNDS = 3;
/** Time to hand the whole schedule to the sender before its first request is due. */
const SCHEDULE_LEAD_MS = 200;

const wallClock = () => performance.timeOrigin + performance.now();

/** A heartbeat as an agent sends it: the route's path and body (`at` absent: now). */
export const heartbeatRequest = (key: string, sessionId: string, at?: string) => ({
  path: `/api/v1/threads/${encodeURIComponent(key)}/events`,
  body: { kind: "heartbeat", session_id: sessionId, ...(at ? { at } : {}) },
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sortNumbers = (values: number[]) => values.sort((a, b) => a - b);

export async function runSustainedLoad(request: LoadRequest, viewers: WatchingViewer[], watched: Map<string, string>): Promise<LoadResult> {
  const { bases, keys } = request;
  let turn = 0;
  const nextBase = () => bases[turn++ % bases.length]!;
  const result: LoadResult = { packets: 0, heartbeats: 0, packetErrors: 0, heartbeatErrors: 0, recordedHeartbeats: 0, firstError: null, ingestMs: [], ingestMsOnViewersLoop: [], heartbeatMs: [], latencies: [], fromSend: [], never: 0, browserLatencies: [], browserNever: 0, bytes: 0, maxLagMs: 0 };
  /** Next action -> the wall clock of its packet's sending and 201, and its thread. */
  const posted = new Map<string, { sent: number; at: number; key: string }>();
  const inFlight = new Set<Promise<void>>();
  const fail = (message: string) => (result.firstError ??= message);

  // Sent and timed on a thread of their own (./sender-thread.mjs): this loop also reads the viewers' streams.
  const sender = new Worker(new URL("./sender-thread.mjs", import.meta.url));
  const answers = new Map<number, (result: SendResult) => void>();
  sender.on("message", (result: SendResult) => {
    answers.get(result.id)?.(result);
    answers.delete(result.id);
  });
  let requests = 0;
  const viaSender = (request: Omit<SendRequest, "id">) =>
    new Promise<SendResult>((resolve) => {
      const id = requests++;
      answers.set(id, resolve);
      sender.postMessage({ id, ...request } satisfies SendRequest);
    });
  // A new thread's first requests load and compile its HTTP client and open its connections,
  // up to 250 ms each here: an agent's client that is already running pays neither. So the
  // sender sends a few untimed requests of the same shape (to the health check) first.
  for (let round = 0; round < WARM_UP_ROUNDS; round++) {
    await Promise.all(bases.flatMap((base) => Array.from({ length: WARM_UP_CONNECTIONS }, () => viaSender({ url: `${base}/api/v1/health`, token: request.packetToken, body: {} }))));
  }
  const timed = (path: string, token: string, body: unknown, due: number, ok: number, onDone: (ms: number, okay: boolean, sent: number, at: number, text: string) => void) => {
    const job = viaSender({ url: `${nextBase()}${path}`, token, body, due }).then(({ ms, status, text, sent, at }) => {
      result.maxLagMs = Math.max(result.maxLagMs, sent - due);
      if (status !== ok) fail(`${path}: ${status ? `HTTP ${status}: ` : ""}${text}`);
      onDone(ms, status === ok, sent, at, text);
    });
    inFlight.add(job);
    void job.finally(() => inFlight.delete(job));
  };

  const sendPacket = (serial: number, due: number) => {
    const toBrowsers = request.browserKeys.length > 0 && serial % request.browserEvery === 0;
    const key = toBrowsers ? request.browserKeys[(serial / request.browserEvery) % request.browserKeys.length]! : keys[(serial * 7919) % keys.length]!;
    const nextAction = `bench sustained next action ${serial}`;
    watched.set(nextAction, key);
    result.packets++;
    const body = { thread: key, summary: "bench:viewers sustained packet", next_action: nextAction, ...(toBrowsers ? { project: request.browserProject } : {}) };
    timed("/api/v1/packets", request.packetToken, body, due, 201, (ms, okay, sent, at) => {
      result.ingestMs.push(ms);
      result.ingestMsOnViewersLoop.push(wallClock() - sent);
      if (okay) posted.set(nextAction, { sent, at, key });
      else {
        result.packetErrors++;
        watched.delete(nextAction);
      }
    });
  };

  const sendHeartbeat = (serial: number, due: number) => {
    const key = keys[(serial * 104_729) % keys.length]!;
    result.heartbeats++;
    const { path, body } = heartbeatRequest(key, `bench-${serial % keys.length}`);
    timed(path, request.heartbeatToken, body, due, 200, (ms, okay, _sent, _at, text) => {
      result.heartbeatMs.push(ms);
      if (!okay) result.heartbeatErrors++;
      else if (/"recorded":true/.test(text)) result.recordedHeartbeats++;
    });
  };

  /** Settles the packets every board has shown, and those past the wait (all of them when `all`). */
  const settle = (all: boolean) => {
    const now = wallClock();
    for (const [nextAction, { sent, at, key }] of posted) {
      const showing = viewers.filter((viewer) => viewer.wants(key));
      const complete = showing.every((viewer) => viewer.seen.has(nextAction));
      if (!complete && !all && now - at < request.neverAfterMs) continue;
      for (const viewer of showing) {
        const seenAt = viewer.seen.get(nextAction);
        const browser = viewer.kind === "browser";
        if (seenAt === undefined) void (browser ? result.browserNever++ : result.never++);
        else {
          (browser ? result.browserLatencies : result.latencies).push(Math.max(0, seenAt - at));
          if (!browser) result.fromSend.push(seenAt - sent);
        }
      }
      posted.delete(nextAction);
      watched.delete(nextAction);
      for (const viewer of viewers) viewer.seen.delete(nextAction);
    }
  };

  const viewerBytes = () => viewers.reduce((sum, viewer) => sum + viewer.bytes, 0);
  const bytesBefore = viewerBytes();
  const totalPackets = Math.round(request.packetsPerSecond * request.seconds);
  const totalHeartbeats = Math.round(request.heartbeatsPerSecond * request.seconds);
  // Every request goes to the sender now with the time it is due, and the sender keeps that
  // schedule on its own loop: a stall of this one (the viewers' streams, up to 300 ms) would
  // otherwise send the requests due meanwhile all at once, a burst no fleet of agents sends.
  const start = wallClock() + SCHEDULE_LEAD_MS;
  for (let i = 0; i < totalPackets; i++) sendPacket(request.firstSerial + i, start + (i / request.packetsPerSecond) * 1000);
  for (let i = 0; i < totalHeartbeats; i++) sendHeartbeat(i, start + (i / request.heartbeatsPerSecond) * 1000);
  while (wallClock() < start + request.seconds * 1000) {
    settle(false);
    await sleep(Math.min(250, Math.max(0, start + request.seconds * 1000 - wallClock())));
  }
  result.bytes = viewerBytes() - bytesBefore;
  // The answers still under way, then the boards still catching up (each packet waits at most neverAfterMs).
  while (inFlight.size > 0) await Promise.race(inFlight);
  await sender.terminate();
  const drainEnd = wallClock() + request.neverAfterMs;
  while (posted.size > 0 && wallClock() < drainEnd) {
    settle(false);
    await sleep(50);
  }
  settle(true);
  sortNumbers(result.ingestMs);
  sortNumbers(result.ingestMsOnViewersLoop);
  sortNumbers(result.heartbeatMs);
  sortNumbers(result.latencies);
  sortNumbers(result.fromSend);
  sortNumbers(result.browserLatencies);
  return result;
}
