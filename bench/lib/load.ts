import http from "node:http";
import { performance } from "node:perf_hooks";

/**
 * A closed-loop load generator: `concurrency` clients on keep-alive sockets,
 * each sending its next request as soon as the previous answer arrives, until
 * the deadline. Runs in this process, so it shares the CPUs with the server.
 */

/** A safety bound on requests per phase, far above what 2 cores can serve. */
const MAX_REQUESTS_PER_PHASE = 2_000_000;
const REQUEST_TIMEOUT_MS = 30_000;
const ERROR_SAMPLES = 5;

export interface LoadOptions {
  port: number;
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

function send(agent: http.Agent, options: LoadOptions, payload: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const request = http.request(
      {
        host: "127.0.0.1",
        port: options.port,
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
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency });
  const latencies: number[] = [];
  const errors: Record<string, number> = {};
  const errorSamples: string[] = [];
  const sizes = { min: Infinity, max: 0, total: 0 };
  let sent = 0;
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
      const outcome = await send(agent, options, payload);
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
