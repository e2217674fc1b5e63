/**
 * bench:viewers: what each open board costs the server per ledger event, when every viewer
 * refetches the whole board (the old behaviour) and when the server sends the changed cards
 * once over the stream (board deltas, docs/decisions/064-board-deltas.md), in the same run.
 *
 * This process is the server: the real route handlers of GET /api/v1/stream and
 * GET /api/v1/board behind node:http, on a fresh SQLite file (or with DATABASE_URL=postgresql://...
 * a database of the run's own, dropped at the end) seeded through the ingest path with
 * BENCH_THREADS active threads (bench/lib/board-packets.ts). The viewers run in a child
 * process (bench/lib/viewer-clients.ts), one token each, so their work is not counted here.
 * For each count in BENCH_VIEWERS and each mode, BENCH_PACKETS packets are ingested one
 * after another, each once every viewer's board shows the previous one's next_action, and
 * it prints: this process's CPU per event (ingest and everything the viewers make it do; on
 * PostgreSQL the database's own processes are not counted), the time from a packet's 201
 * until every viewer's board shows its next_action (p50/p95/max, and how many never did
 * within 10 s), and the bytes each viewer received per event; ratios are delta / refetch.
 *
 * Env: BENCH_THREADS (1000), BENCH_VIEWERS (1,10,50,200), BENCH_PACKETS (5), BENCH_SEED_CHUNK (256 packets
 * ingested at once while seeding; the PostgreSQL figures in docs/performance.md used 16).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { boardPackets, type BoardPlan } from "./lib/board-packets";
import { chooseDatabase, cleanUpDatabase } from "./lib/server";
import { fixed, formatTable, positiveNumber } from "./lib/report";
import type { FromViewers, ToViewers, ViewerMode } from "./lib/viewer-clients";
import { resetConfig } from "../lib/server/config";
import { closeDatabase } from "../lib/db/client";
import { migrateDatabase } from "../lib/db/migrate/index";
import { ingestPacket } from "../lib/ingest/ingest";
import { createApiToken } from "../lib/auth/tokens";
import { openStreamCount } from "../lib/events/ledger-stream";
import { boardDeltasComputed } from "../lib/board/board-delta";
import { GET as streamRoute } from "../app/api/v1/stream/route";
import { GET as boardRoute } from "../app/api/v1/board/route";

const SEED_CHUNK = Number(process.env.BENCH_SEED_CHUNK ?? 256);
const NEVER_AFTER_MS = 10_000;
const MODES: ViewerMode[] = ["refetch", "delta"];

function viewerCountsFromEnv(): number[] {
  const counts = (process.env.BENCH_VIEWERS ?? "1,10,50,200").split(",").map(Number);
  if (counts.some((count) => !Number.isInteger(count) || count < 1)) throw new Error("BENCH_VIEWERS must be positive integers, e.g. 1,10,50,200");
  return counts;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const cpuMs = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

/** The two routes the board page uses, served by their real handlers. */
function serveRoutes(): Promise<{ base: string; close: () => Promise<void> }> {
  const server = createServer((incoming: IncomingMessage, outgoing: ServerResponse) => {
    void (async () => {
      const url = new URL(incoming.url ?? "/", `http://${incoming.headers.host}`);
      const route = url.pathname === "/api/v1/stream" ? streamRoute : url.pathname === "/api/v1/board" ? boardRoute : null;
      if (!route) {
        outgoing.writeHead(404).end();
        return;
      }
      const abort = new AbortController();
      outgoing.on("close", () => abort.abort());
      const headers = Object.entries(incoming.headers).flatMap(([name, value]) => (typeof value === "string" ? [[name, value] as [string, string]] : []));
      const response = await route(new Request(url, { headers, signal: abort.signal }));
      outgoing.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body) {
        try {
          for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) outgoing.write(chunk);
        } catch {
          // The viewer went away.
        }
      }
      outgoing.end();
    })().catch((error: unknown) => {
      console.error("bench: route failed", error);
      outgoing.destroy();
    });
  });
  // Longer than any pause between rows: a viewer's kept-alive connection is never closed under its next request.
  server.keepAliveTimeout = 120_000;
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({ base: `http://127.0.0.1:${port}`, close: () => new Promise((done) => (server.closeAllConnections(), server.close(() => done()))) });
    }),
  );
}

/** The viewers' process, and a way to ask it something and await its answer. */
function startViewers(): { ask: (message: ToViewers) => Promise<FromViewers>; stop: () => void } {
  const script = fileURLToPath(new URL("./lib/viewer-clients.ts", import.meta.url));
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", script], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const waiting: ((message: FromViewers) => void)[] = [];
  child.on("message", (message: FromViewers) => waiting.shift()?.(message));
  child.on("exit", (code) => {
    if (code) throw new Error(`bench: the viewers' process exited with ${code}`);
  });
  return {
    ask: (message) =>
      new Promise((resolve) => {
        waiting.push(resolve);
        child.send(message);
      }),
    stop: () => child.kill(),
  };
}

/** Waits until refetches still under way (past the 10 s wait) are done: the next row starts on an idle server. */
async function settle(): Promise<void> {
  for (;;) {
    const before = cpuMs();
    await sleep(500);
    if (cpuMs() - before < 50) return;
  }
}

/**
 * PostgreSQL cannot store U+0000 in text and the board's packets carry it among their hostile
 * characters (storing them there fails, as in bench:heartbeats): on PostgreSQL they are dropped.
 */
function withoutNul<P extends { body: Record<string, unknown> }>(packet: P, dialect: "sqlite" | "postgresql"): P {
  if (dialect === "sqlite") return packet;
  return { ...packet, body: JSON.parse(JSON.stringify(packet.body).replaceAll("\\u0000", "")) as Record<string, unknown> };
}

interface Row {
  viewers: number;
  mode: ViewerMode;
  cpuPerEvent: number;
  latencies: number[];
  never: number;
  bytesPerViewer: number;
  computed: number;
}

async function measure(
  ask: (message: ToViewers) => Promise<FromViewers>,
  viewers: number,
  mode: ViewerMode,
  keys: string[],
  packets: number,
  serial: { next: number },
): Promise<Row> {
  const send = async (record: boolean) => {
    const key = keys[(serial.next * 7919) % keys.length]!;
    const nextAction = `bench next action ${serial.next++}`;
    await ask({ type: "expect", key, nextAction });
    await ingestPacket({ thread: key, summary: "bench:viewers packet", next_action: nextAction }, { kind: "cli", actor: "bench" });
    const posted = performance.timeOrigin + performance.now();
    const deadline = Date.now() + NEVER_AFTER_MS;
    for (;;) {
      const report = (await ask({ type: "report" })) as Extract<FromViewers, { type: "seen" }>;
      if (report.at.every((at) => at !== null) || Date.now() > deadline) {
        if (!record) return null;
        return { latencies: report.at.flatMap((at) => (at === null ? [] : [at - posted])), never: report.at.filter((at) => at === null).length, bytes: report.bytes };
      }
      await sleep(10);
    }
  };
  await send(false); // warm-up: caches, the first delta
  const computedBefore = boardDeltasComputed();
  const cpuBefore = cpuMs();
  const latencies: number[] = [];
  let never = 0;
  let bytes = 0;
  for (let packet = 0; packet < packets; packet++) {
    const result = (await send(true))!;
    latencies.push(...result.latencies);
    never += result.never;
    bytes += result.bytes.reduce((sum, each) => sum + each, 0);
  }
  const cpu = cpuMs() - cpuBefore;
  return {
    viewers,
    mode,
    cpuPerEvent: cpu / packets,
    latencies: latencies.sort((a, b) => a - b),
    never,
    bytesPerViewer: bytes / packets / viewers,
    computed: (boardDeltasComputed() - computedBefore) / packets,
  };
}

async function main() {
  const threads = positiveNumber("BENCH_THREADS", 1000, true);
  const packets = positiveNumber("BENCH_PACKETS", 5, true);
  const counts = viewerCountsFromEnv();
  const runId = Date.now().toString(36);
  const db = await chooseDatabase(runId, false);
  process.env.DATABASE_URL = db.url;
  // One token per viewer, as many people would have; the rate limit is off so that the old behaviour is measured, not refused.
  process.env.BATON_RATE_LIMIT_PER_MINUTE ??= "0";
  resetConfig();
  const routes = await serveRoutes();
  const viewersProcess = startViewers();
  const rows: Row[] = [];
  try {
    await migrateDatabase(db.url);
    const plan: BoardPlan = { runId, threads, versions: 1, nowMs: Date.now() };
    const board = boardPackets(plan);
    const keys: string[] = [];
    const t0 = performance.now();
    for (let at = 0; at < threads; at += SEED_CHUNK) {
      const chunk = Array.from({ length: Math.min(SEED_CHUNK, threads - at) }, (_, i) => withoutNul(board.packet(at + i, 0), db.dialect));
      await Promise.all(chunk.map((packet) => ingestPacket(packet.body, { kind: "cli", actor: "bench" }, packet.receivedAt)));
      keys.push(...chunk.map((packet) => packet.body.thread as string));
    }
    console.log(`bench: ${threads} threads seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s (${db.description})`);
    const tokens = await Promise.all(Array.from({ length: Math.max(...counts) }, (_, i) => createApiToken(`viewer-${i}`, ["packets:read"]).then((made) => made.token)));
    const serial = { next: 0 };
    for (const viewers of counts) {
      for (const mode of MODES) {
        await viewersProcess.ask({ type: "open", base: routes.base, tokens: tokens.slice(0, viewers), mode });
        const row = await measure(viewersProcess.ask, viewers, mode, keys, packets, serial);
        rows.push(row);
        await viewersProcess.ask({ type: "close" });
        while (openStreamCount() > 0) await sleep(20);
        await settle();
        console.log(`bench: ${viewers} viewers, ${mode}: ${fixed(row.cpuPerEvent, 1)} ms CPU per event`);
      }
    }
  } finally {
    viewersProcess.stop();
    await routes.close();
    // On PostgreSQL the live feed keeps its connection 30 s after its last stream (lib/events/ledger-feed.ts): the database is dropped after it.
    if (db.dialect === "postgresql") await sleep(31_000);
    await closeDatabase();
    await cleanUpDatabase(db);
  }
  const baseline = new Map(rows.filter((row) => row.mode === "refetch").map((row) => [row.viewers, row]));
  const table = rows.map((row) => {
    const base = baseline.get(row.viewers)!;
    return [
      String(row.viewers),
      row.mode,
      fixed(row.cpuPerEvent, 1),
      fixed(row.cpuPerEvent / base.cpuPerEvent, 3),
      `${fixed(percentile(row.latencies, 50), 0)} / ${fixed(percentile(row.latencies, 95), 0)} / ${fixed(row.latencies.at(-1) ?? NaN, 0)}`,
      String(row.never),
      fixed(row.bytesPerViewer / 1024, 1),
      fixed(row.bytesPerViewer / base.bytesPerViewer, 4),
      row.mode === "delta" ? fixed(row.computed, 1) : "-",
    ];
  });
  console.log(`\nviewers x events, ${threads} active threads, ${packets} packets per row, one at a time, ${db.dialect}:`);
  console.log(
    formatTable(
      ["viewers", "mode", "server CPU ms/event", "vs refetch", "201 to every board ms p50 / p95 / max", "never", "KB/viewer/event", "vs refetch", "deltas computed/event"],
      table,
    ),
  );
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
