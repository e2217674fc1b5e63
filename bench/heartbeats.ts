/**
 * bench:heartbeats: what one session heartbeat costs the server as the board grows.
 *
 * In this process, no HTTP (the route adds the same fixed cost at any board size): a
 * fresh SQLite file (or with DATABASE_URL=postgresql://... a database of the run's own,
 * dropped at the end) seeded through the real ingest path with the board benchmark's
 * packets (bench/lib/board-packets.ts), BENCH_VERSIONS versions per thread. For each
 * size in BENCH_SIZES (200 and 1,000 active threads) it sends heartbeats from
 * BENCH_CLIENTS concurrent callers to random threads for BENCH_SECONDS through
 * recordSessionEvent (what POST /api/v1/threads/{key}/events runs) and prints
 * heartbeats/s, p50/p99, this process's CPU per heartbeat, and the SQL statements per heartbeat (one recorded in the ledger,
 * then a quiet one: at most one a minute per thread is recorded) and per board load (cold and
 * warm caches).
 *
 * Env: BENCH_SIZES (200,1000), BENCH_VERSIONS (3), BENCH_CLIENTS (20), BENCH_SECONDS (8).
 */
import { performance } from "node:perf_hooks";
import { boardPackets, type BoardPlan } from "./lib/board-packets";
import { chooseDatabase, cleanUpDatabase } from "./lib/server";
import { fixed, formatTable, positiveNumber } from "./lib/report";
import { resetConfig } from "../lib/server/config";
import { closeDatabase } from "../lib/db/client";
import { migrateDatabase } from "../lib/db/migrate/index";
import { ingestPacket } from "../lib/ingest/ingest";
import { recordSessionEvent } from "../lib/board/watchdog/session-events";
import { loadBoard } from "../lib/board/board";
import { processSlot } from "../lib/core/singleton";
import { threadFiltersSchema } from "../lib/views/threads/filters";
import { statementsOf } from "../testing/count-statements";

const SEED_CHUNK = 256;

function sizesFromEnv(): number[] {
  const sizes = (process.env.BENCH_SIZES ?? "200,1000").split(",").map(Number);
  if (sizes.some((size) => !Number.isInteger(size) || size < 1)) throw new Error("BENCH_SIZES must be positive integers, e.g. 200,1000");
  return [...sizes].sort((a, b) => a - b);
}

async function seed(plan: BoardPlan, fromThread: number, toThread: number): Promise<string[]> {
  const packets = boardPackets(plan);
  const keys = new Set<string>();
  const jobs: (() => Promise<void>)[] = [];
  for (let index = 0; index < plan.versions; index++) {
    for (let thread = fromThread; thread < toThread; thread++) {
      const { body, receivedAt } = packets.packet(thread, index);
      keys.add(body.thread as string);
      jobs.push(async () => void (await ingestPacket(body, { kind: "cli", actor: "bench" }, receivedAt)));
    }
  }
  for (let at = 0; at < jobs.length; at += SEED_CHUNK) await Promise.all(jobs.slice(at, at + SEED_CHUNK).map((job) => job()));
  return [...keys];
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

async function heartbeats(keys: string[], clients: number, seconds: number) {
  const times: number[] = [];
  const deadline = performance.now() + seconds * 1000;
  let serial = 0;
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < deadline) {
        const key = keys[(serial++ * 7919) % keys.length]!;
        const begin = performance.now();
        await recordSessionEvent(key, { kind: "heartbeat", session_id: "bench" }, { actor: "bench" });
        times.push(performance.now() - begin);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  times.sort((a, b) => a - b);
  return {
    count: times.length,
    perSecond: times.length / elapsed,
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    // This process's CPU (not the database's) per heartbeat: steadier than the rate on a shared machine.
    cpuMsEach: (cpu.user + cpu.system) / 1000 / Math.max(1, times.length),
  };
}

async function main() {
  const sizes = sizesFromEnv();
  const versions = positiveNumber("BENCH_VERSIONS", 3, true);
  const clients = positiveNumber("BENCH_CLIENTS", 20, true);
  const seconds = positiveNumber("BENCH_SECONDS", 8, false);
  const runId = `${Date.now().toString(36)}`;
  const db = await chooseDatabase(runId, false);
  process.env.DATABASE_URL = db.url;
  resetConfig();
  const rows: string[][] = [];
  try {
    await migrateDatabase(db.url);
    const plan: BoardPlan = { runId, threads: sizes.at(-1)!, versions, nowMs: Date.now() };
    const keys: string[] = [];
    let seeded = 0;
    const all = threadFiltersSchema.parse({});
    for (const size of sizes) {
      const t0 = performance.now();
      keys.push(...(await seed(plan, seeded, size)));
      seeded = size;
      console.log(`bench: ${size} threads seeded (${versions} versions each) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      // A cold cache: as after a restart (the commit-regression cache lives in a process slot).
      processSlot<unknown>("CommitRegressions").value = undefined;
      const cold = await statementsOf(() => loadBoard(all));
      const warm = await statementsOf(() => loadBoard(all));
      const recorded = await statementsOf(() => recordSessionEvent(keys[0]!, { kind: "heartbeat" }, { actor: "bench" }));
      const quiet = await statementsOf(() => recordSessionEvent(keys[0]!, { kind: "heartbeat" }, { actor: "bench" }));
      await heartbeats(keys, clients, Math.min(1, seconds)); // warm-up
      const result = await heartbeats(keys, clients, seconds);
      rows.push([String(size), fixed(result.perSecond, 0), fixed(result.p50, 1), fixed(result.p99, 1), fixed(result.cpuMsEach, 2), `${recorded} / ${quiet}`, fixed(cold, 0), fixed(warm, 0)]);
      console.log(`bench: ${size} threads: ${result.count} heartbeats`);
    }
  } finally {
    await closeDatabase();
    await cleanUpDatabase(db);
  }
  console.log(`\nheartbeats, ${clients} concurrent callers, ${seconds} s per size, ${db.dialect}:`);
  console.log(formatTable(["threads", "heartbeats/s", "p50 ms", "p99 ms", "process CPU ms/heartbeat", "statements/heartbeat (recorded / quiet)", "board load statements (cold)", "(warm)"], rows));
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
