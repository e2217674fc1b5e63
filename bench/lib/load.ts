import http from "node:http";
import { performance } from "node:perf_hooks";

/**
 * A closed-loop load generator: `concurrency` clients on keep-alive sockets,
 * each sending its next request as soon as the previous answer arrives, until
 * the deadline. Several servers (`ports`) take the requests in turn (round
 * robin, as a load balancer would). Runs in this process, so it shares the CPUs
 * with the servers.
 */

/** A safety bound on requests per phase, far above what 2 cores can serve. */
const MAX_REQUESTS_PER_PHASE = 2_000_000;
const REQUEST_TIMEOUT_MS = 30_000;
const ERROR_SAMPLES = 5;

export interface LoadOptions {
  /** The servers on 127.0.0.1, sent requests in turn. */
  ports: number[];
  path: string;
  token: string;
  seconds: number;
  concurrency: number;
  /** The status that counts as a success. */
  okStatus: number;
  /** The body of the next request. */
  body: () => string;
  signal: AbortSignal;
}

export interface LoadResult {
  path: string;
  seconds: number;
  requests: number;
  ok: number;
  /** Non-success outcomes by HTTP status or network error code. */
  errors: Record<string, number>;
  errorSamples: string[];
  /** Latencies of successful requests, in ms. */
  latencies: Float64Array;
  bodyBytes: { min: number; max: number; mean: number };
}

interface Outcome {
  status: number | string;
  /** The start of the answer's body, kept only for failures. */
  detail?: string;
}

function send(agent: http.Agent, options: LoadOptions, port: number, payload: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const request = http.request(
      {
        host: "127.0.0.1",
        port,
        path: options.path,
        method: "POST",
        agent,
        timeout: REQUEST_TIMEOUT_MS,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(payload),
          authorization: `Bearer ${options.token}`,
        },
      },
      (response) => {
        const status = response.statusCode ?? 0;
        if (status === options.okStatus) {
          response.resume();
          response.on("end", () => resolve({ status }));
          return;
        }
        let detail = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          if (detail.length < 300) detail += chunk;
        });
        response.on("end", () => resolve({ status, detail: detail.slice(0, 300) }));
      },
    );
    request.on("timeout", () => request.destroy(new Error("request timed out")));
    request.on("error", (error: NodeJS.ErrnoException) => resolve({ status: error.code ?? error.message }));
    request.end(payload);
  });
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  if (!options.ports.length) throw new Error("runLoad: no server to send to");
  // maxSockets counts per server: every client may hold a socket to each.
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency });
  const latencies: number[] = [];
  const errors: Record<string, number> = {};
  const errorSamples: string[] = [];
  const sizes = { min: Infinity, max: 0, total: 0 };
  let sent = 0;
  let turn = 0;
  const started = performance.now();
  const deadline = started + options.seconds * 1000;

  async function client(): Promise<void> {
    while (performance.now() < deadline && sent < MAX_REQUESTS_PER_PHASE && !options.signal.aborted) {
      sent++;
      const payload = options.body();
      const bytes = Buffer.byteLength(payload);
      sizes.min = Math.min(sizes.min, bytes);
      sizes.max = Math.max(sizes.max, bytes);
      sizes.total += bytes;
      const t0 = performance.now();
      const port = options.ports[turn++ % options.ports.length]!;
      const outcome = await send(agent, options, port, payload);
      if (outcome.status === options.okStatus) {
        latencies.push(performance.now() - t0);
        continue;
      }
      const key = String(outcome.status);
      errors[key] = (errors[key] ?? 0) + 1;
      if (errorSamples.length < ERROR_SAMPLES) errorSamples.push(`${key}: ${outcome.detail ?? ""}`.trim());
    }
  }

  try {
    await Promise.all(Array.from({ length: options.concurrency }, client));
  } finally {
    agent.destroy();
  }
  return {
    path: options.path,
    // In-flight requests finish after the deadline: the elapsed time includes them.
    seconds: (performance.now() - started) / 1000,
    requests: sent,
    ok: latencies.length,
    errors,
    errorSamples,
    latencies: Float64Array.from(latencies).sort(),
    bodyBytes: { min: sent ? sizes.min : 0, max: sizes.max, mean: sent ? sizes.total / sent : 0 },
  };
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function errorCount(result: LoadResult): number {
  return Object.values(result.errors).reduce((sum, n) => sum + n, 0);
}

/** One GET, timed to the first byte of the answer and to its end. */
export interface TimedResponse {
  status: number | string;
  /** Until the whole body had arrived, in ms. */
  ms: number;
  /** Until the status line and headers had arrived, in ms. */
  ttfbMs: number;
  bytes: number;
  body: Buffer;
}

export function timedGet(agent: http.Agent, port: number, path: string, headers: Record<string, string>): Promise<TimedResponse> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    let ttfbMs = NaN;
    const request = http.request({ host: "127.0.0.1", port, path, method: "GET", agent, timeout: REQUEST_TIMEOUT_MS, headers }, (response) => {
      ttfbMs = performance.now() - t0;
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        const body = Buffer.concat(chunks);
        resolve({ status: response.statusCode ?? 0, ms: performance.now() - t0, ttfbMs, bytes: body.length, body });
      });
      response.on("error", (error: NodeJS.ErrnoException) =>
        resolve({ status: error.code ?? error.message, ms: NaN, ttfbMs, bytes: 0, body: Buffer.alloc(0) }),
      );
    });
    request.on("timeout", () => request.destroy(new Error("request timed out")));
    request.on("error", (error: NodeJS.ErrnoException) =>
      resolve({ status: error.code ?? error.message, ms: NaN, ttfbMs, bytes: 0, body: Buffer.alloc(0) }),
    );
    request.end();
  });
}

export interface SequenceOptions {
  port: number;
  path: string;
  headers: Record<string, string>;
  /** Requests sent and thrown away first. */
  warmups: number;
  requests: number;
  okStatus: number;
  signal: AbortSignal;
}

export interface SequenceResult {
  path: string;
  requests: number;
  ok: number;
  /** Non-success outcomes (measured requests only) by HTTP status or network error code. */
  errors: Record<string, number>;
  errorSamples: string[];
  warmupErrors: number;
  /** Sorted, of successful measured requests, in ms: to the end of the body, and to the first byte. */
  latencies: Float64Array;
  ttfb: Float64Array;
  bytes: { min: number; max: number };
  /** The body of the last successful answer (warm-ups included), or null. */
  lastBody: Buffer | null;
}

/**
 * One request after another on one keep-alive socket: `warmups` thrown away,
 * then `requests` measured. Bounded by the counts; stops early when `signal` aborts.
 */
export async function runSequential(options: SequenceOptions): Promise<SequenceResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const latencies: number[] = [];
  const ttfb: number[] = [];
  const errors: Record<string, number> = {};
  const errorSamples: string[] = [];
  const bytes = { min: Infinity, max: 0 };
  let warmupErrors = 0;
  let requests = 0;
  let lastBody: Buffer | null = null;
  try {
    for (let i = 0; i < options.warmups + options.requests && !options.signal.aborted; i++) {
      const measured = i >= options.warmups;
      const answer = await timedGet(agent, options.port, options.path, options.headers);
      const ok = answer.status === options.okStatus;
      if (ok) lastBody = answer.body;
      if (!measured) {
        if (!ok) warmupErrors++;
        continue;
      }
      requests++;
      if (ok) {
        latencies.push(answer.ms);
        ttfb.push(answer.ttfbMs);
        bytes.min = Math.min(bytes.min, answer.bytes);
        bytes.max = Math.max(bytes.max, answer.bytes);
        continue;
      }
      const key = String(answer.status);
      errors[key] = (errors[key] ?? 0) + 1;
      if (errorSamples.length < ERROR_SAMPLES) errorSamples.push(`${key}: ${answer.body.toString("utf8", 0, 300)}`.trim());
    }
  } finally {
    agent.destroy();
  }
  const sorted = (values: number[]) => Float64Array.from(values).sort();
  return {
    path: options.path,
    requests,
    ok: latencies.length,
    errors,
    errorSamples,
    warmupErrors,
    latencies: sorted(latencies),
    ttfb: sorted(ttfb),
    bytes: { min: latencies.length ? bytes.min : 0, max: bytes.max },
    lastBody,
  };
}

export interface InterleaveTarget {
  port: number;
  path: string;
  headers: Record<string, string>;
}

/**
 * The same request to several servers in turn, one at a time, `rounds` times
 * (the order rotates each round): whatever else slows the machine meanwhile
 * slows them alike, so their figures compare fairly. One result per target.
 */
export async function runInterleaved(options: {
  targets: InterleaveTarget[];
  rounds: number;
  okStatus: number;
  signal: AbortSignal;
}): Promise<SequenceResult[]> {
  const agents = options.targets.map(() => new http.Agent({ keepAlive: true, maxSockets: 1 }));
  const samples = options.targets.map(() => ({
    latencies: [] as number[],
    ttfb: [] as number[],
    errors: {} as Record<string, number>,
    errorSamples: [] as string[],
    requests: 0,
    bytes: { min: Infinity, max: 0 },
    lastBody: null as Buffer | null,
  }));
  try {
    for (let round = 0; round < options.rounds && !options.signal.aborted; round++) {
      for (let turn = 0; turn < options.targets.length; turn++) {
        const index = (round + turn) % options.targets.length;
        const target = options.targets[index]!;
        const sample = samples[index]!;
        const answer = await timedGet(agents[index]!, target.port, target.path, target.headers);
        sample.requests++;
        if (answer.status === options.okStatus) {
          sample.latencies.push(answer.ms);
          sample.ttfb.push(answer.ttfbMs);
          sample.bytes.min = Math.min(sample.bytes.min, answer.bytes);
          sample.bytes.max = Math.max(sample.bytes.max, answer.bytes);
          sample.lastBody = answer.body;
          continue;
        }
        const key = String(answer.status);
        sample.errors[key] = (sample.errors[key] ?? 0) + 1;
        if (sample.errorSamples.length < ERROR_SAMPLES) sample.errorSamples.push(`${key}: ${answer.body.toString("utf8", 0, 300)}`.trim());
      }
    }
  } finally {
    for (const agent of agents) agent.destroy();
  }
  return options.targets.map((target, index) => {
    const sample = samples[index]!;
    return {
      path: target.path,
      requests: sample.requests,
      ok: sample.latencies.length,
      errors: sample.errors,
      errorSamples: sample.errorSamples,
      warmupErrors: 0,
      latencies: Float64Array.from(sample.latencies).sort(),
      ttfb: Float64Array.from(sample.ttfb).sort(),
      bytes: { min: sample.latencies.length ? sample.bytes.min : 0, max: sample.bytes.max },
      lastBody: sample.lastBody,
    };
  });
}
