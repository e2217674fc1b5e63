import { setMaxListeners } from "node:events";
import http from "node:http";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * Load over real HTTP for the overload and crash specs: every request's outcome is
 * kept (status, Retry-After, the packet id of a 2xx), so that a spec can check
 * afterwards that each acknowledged packet was stored. node:http with keep-alive
 * agents; runs in the test's process, so it shares the machine with the server.
 */

export interface SendOutcome {
  /** Which packet (the caller's sequence number). */
  seq: number;
  /** The HTTP status, or the network error's code (ECONNRESET, ECONNREFUSED, timeout...). */
  status: number | string;
  /** From the moment the request was due (open loop) or sent (closed loop) to the end of the answer. */
  latencyMs: number;
  /** Of that, the time spent waiting for a free connection in the client (open loop): not the server's doing. */
  clientWaitMs: number;
  /** For a request on a new connection, how long the TCP connection took to open (else null). */
  connectMs: number | null;
  retryAfter: string | null;
  /** The stored version's id, from a 2xx answer. */
  packetId: string | null;
  duplicate: boolean | null;
  /** The start of a non-2xx body, for the failure message. */
  detail: string | null;
}

export interface Target {
  port: number;
  token: string;
  /** Gives up on an answer after this long (counted as "timeout"). */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 120_000;

/** The status of a request given up before it had a connection: it never left the client. */
export const NOT_SENT = "not sent";

/**
 * POSTs one packet body; never throws: a network error is an outcome too. When
 * `abandon` aborts while the request still waits for a free connection, it is
 * dropped unsent (status NOT_SENT); one already sent is always answered.
 */
export function sendPacket(agent: http.Agent, target: Target, seq: number, body: string, dueAt = performance.now(), abandon?: AbortSignal): Promise<SendOutcome> {
  return new Promise((resolve) => {
    let onSocketAt = NaN;
    let connectMs: number | null = null;
    const done = (outcome: Omit<SendOutcome, "seq" | "latencyMs" | "clientWaitMs" | "connectMs">) =>
      resolve({
        seq,
        latencyMs: performance.now() - dueAt,
        clientWaitMs: (Number.isNaN(onSocketAt) ? performance.now() : onSocketAt) - dueAt,
        connectMs,
        ...outcome,
      });
    const request = http.request(
      {
        host: "127.0.0.1",
        port: target.port,
        path: "/api/v1/packets",
        method: "POST",
        agent,
        timeout: target.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          authorization: `Bearer ${target.token}`,
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("error", (error: NodeJS.ErrnoException) =>
          done({ status: error.code ?? "response error", retryAfter: null, packetId: null, duplicate: null, detail: error.message }),
        );
        response.on("end", () => {
          const status = response.statusCode ?? 0;
          const text = Buffer.concat(chunks).toString("utf8");
          const retryAfter = typeof response.headers["retry-after"] === "string" ? response.headers["retry-after"] : null;
          if (status >= 200 && status < 300) {
            const answer = JSON.parse(text) as { packet_id: string; duplicate: boolean };
            done({ status, retryAfter, packetId: answer.packet_id, duplicate: answer.duplicate, detail: null });
          } else {
            done({ status, retryAfter, packetId: null, duplicate: null, detail: text.slice(0, 300) });
          }
        });
      },
    );
    const giveUp = () => {
      if (Number.isNaN(onSocketAt)) request.destroy(Object.assign(new Error("given up before a connection was free"), { code: NOT_SENT }));
    };
    abandon?.addEventListener("abort", giveUp, { once: true });
    request.once("socket", (socket) => {
      onSocketAt = performance.now();
      if (socket.connecting) socket.once("connect", () => (connectMs = performance.now() - onSocketAt));
    });
    request.once("close", () => abandon?.removeEventListener("abort", giveUp));
    request.on("timeout", () => request.destroy(Object.assign(new Error("no answer in time"), { code: "timeout" })));
    request.on("error", (error: NodeJS.ErrnoException) =>
      done({ status: error.code ?? error.message, retryAfter: null, packetId: null, duplicate: null, detail: error.message }),
    );
    request.end(body);
  });
}

export interface LoadRun {
  outcomes: SendOutcome[];
  /** From the first request to the last answer. */
  seconds: number;
}

/**
 * Closed loop: `concurrency` clients, each sending its next packet as soon as the
 * previous answer is in, until `seconds` have passed or `stop` aborts (then each
 * client finishes the request it has out). What the server sustains is its 2xx rate here.
 */
export async function closedLoop(
  options: Target & { concurrency: number; seconds?: number; stop?: AbortSignal; body: (seq: number) => string; firstSeq?: number },
): Promise<LoadRun> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency });
  const outcomes: SendOutcome[] = [];
  let seq = options.firstSeq ?? 0;
  const started = performance.now();
  const deadline = started + (options.seconds ?? Infinity) * 1000;
  const client = async () => {
    while (performance.now() < deadline && !options.stop?.aborted) {
      const mine = seq++;
      outcomes.push(await sendPacket(agent, options, mine, options.body(mine)));
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency }, client));
  } finally {
    agent.destroy();
  }
  return { outcomes, seconds: (performance.now() - started) / 1000 };
}

/**
 * Open loop: packets due at `ratePerSecond` for `seconds`, whatever the answers, from at most
 * `maxSockets` connections; latency counts from when a packet was due (docs/testing.md).
 */
export async function openLoop(
  options: Target & { ratePerSecond: number; seconds: number; maxSockets: number; body: (seq: number) => string; firstSeq?: number },
): Promise<LoadRun> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.maxSockets });
  const timeUp = new AbortController();
  // Every request waiting for a connection listens to it.
  setMaxListeners(0, timeUp.signal);
  const pending: Promise<SendOutcome>[] = [];
  const firstSeq = options.firstSeq ?? 0;
  const total = Math.round(options.ratePerSecond * options.seconds);
  const started = performance.now();
  try {
    for (let sent = 0; sent < total; ) {
      const elapsed = performance.now() - started;
      const due = Math.min(total, Math.floor((elapsed / 1000) * options.ratePerSecond) + 1);
      for (; sent < due; sent++) {
        const dueAt = started + (sent / options.ratePerSecond) * 1000;
        pending.push(sendPacket(agent, options, firstSeq + sent, options.body(firstSeq + sent), dueAt, timeUp.signal));
      }
      await sleep(5);
    }
    timeUp.abort();
    const outcomes = await Promise.all(pending);
    return { outcomes, seconds: (performance.now() - started) / 1000 };
  } finally {
    agent.destroy();
  }
}

/** GET `path` every `everyMs` until `signal` aborts: how long the server takes to answer anything meanwhile. */
export async function sampleResponsiveness(port: number, path: string, everyMs: number, signal: AbortSignal, headers: Record<string, string> = {}): Promise<{ status: number | string; ms: number }[]> {
  const samples: { status: number | string; ms: number }[] = [];
  // A connection of its own, never queued behind the load's sockets.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    while (!signal.aborted) {
      const t0 = performance.now();
      const status = await new Promise<number | string>((resolve) => {
        const request = http.get({ host: "127.0.0.1", port, path, agent, headers, timeout: 60_000 }, (response) => {
          response.resume();
          response.on("end", () => resolve(response.statusCode ?? 0));
        });
        request.on("timeout", () => request.destroy(Object.assign(new Error("no answer in time"), { code: "timeout" })));
        request.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
      });
      samples.push({ status, ms: performance.now() - t0 });
      await sleep(Math.max(0, everyMs - (performance.now() - t0)));
    }
  } finally {
    agent.destroy();
  }
  return samples;
}

/**
 * Every `everyMs` until `signal` aborts, GETs `path` on a new connection, without
 * waiting for the previous one: how long a client that is not already connected
 * (a load balancer's probe, a new agent, a browser) waits meanwhile.
 */
export async function probeNewConnections(port: number, path: string, everyMs: number, signal: AbortSignal): Promise<{ startedAtMs: number; status: number | string; ms: number }[]> {
  const started = performance.now();
  const probes: Promise<{ startedAtMs: number; status: number | string; ms: number }>[] = [];
  const probe = () =>
    new Promise<{ startedAtMs: number; status: number | string; ms: number }>((resolve) => {
      const t0 = performance.now();
      const done = (status: number | string) => resolve({ startedAtMs: t0 - started, status, ms: performance.now() - t0 });
      const request = http.get({ host: "127.0.0.1", port, path, agent: false, timeout: 180_000 }, (response) => {
        response.resume();
        response.on("end", () => done(response.statusCode ?? 0));
      });
      request.on("timeout", () => request.destroy(Object.assign(new Error("no answer in time"), { code: "timeout" })));
      request.on("error", (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
    });
  while (!signal.aborted) {
    probes.push(probe());
    await sleep(everyMs);
  }
  return Promise.all(probes);
}

/** Nearest-rank percentile of unsorted values. */
export function percentile(values: number[], p: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1]!;
}

/** Outcomes counted by status (or error code). */
export function countByStatus(outcomes: readonly { status: number | string }[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const outcome of outcomes) counts[String(outcome.status)] = (counts[String(outcome.status)] ?? 0) + 1;
  return counts;
}
