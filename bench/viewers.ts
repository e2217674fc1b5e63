/**
 * bench:viewers: what open boards cost the server, when every viewer refetches the whole board
 * on each ledger event (the old behaviour) and when the server sends the changed cards once
 * over the stream (board deltas, docs/decisions/064-board-deltas.md), in the same run.
 *
 * This process is the server: the real route handlers of GET /api/v1/stream, GET /api/v1/board,
 * POST /api/v1/packets and POST /api/v1/threads/{key}/events behind node:http, on a fresh SQLite
 * file (or with DATABASE_URL=postgresql://... a database of the run's own, dropped at the end)
 * seeded through the ingest path with BENCH_THREADS active threads (bench/lib/board-packets.ts).
 * The viewers, and the sustained load, run in a child process (bench/lib/viewer-clients.ts),
 * one token each, so their work is not counted here. Two phases:
 *
 * 1. One at a time (bench/lib/one-at-a-time.ts): for each count in BENCH_VIEWERS and each mode,
 *    BENCH_PACKETS packets ingested one after another; CPU per event, 201 to every board,
 *    bytes per viewer per event.
 * 2. Sustained (bench/lib/sustained.ts): BENCH_SUSTAINED_VIEWERS delta viewers while
 *    BENCH_PACKET_RATE packets/s and BENCH_HEARTBEAT_RATE heartbeats/s are sent open-loop for
 *    BENCH_SECONDS over HTTP; server CPU in cores (plus the run's PostgreSQL backends), 201 to
 *    every board p50/p95/max and how many never arrived, ingest and heartbeat p50/p99, bytes per
 *    viewer per event, RSS. Then the old behaviour beside it at BENCH_REFETCH_VIEWERS viewers for
 *    BENCH_REFETCH_SECONDS (it saturates the server long before 50 viewers), and deltas at that
 *    same count and length, and the same load with no viewer at all. The first row is checked
 *    against issue 15's targets (PASS/MISS).
 *
 * With BENCH_INSTANCES=N the server is N production servers instead (`next start`, built into
 * .next-bench when stale; N > 1 needs PostgreSQL), the HTTP viewers split between them, plus
 * BENCH_BROWSERS (2) Chromium pages of the real board, signed in, filtered to a project of
 * BROWSER_THREADS threads of their own (every card in the DOM: the columns are virtualised),
 * to which every BROWSER_EVERY-th packet goes; their DOM is checked for its next_action. CPU
 * and RSS are then the servers' processes'; phase 1 is skipped (it ingests in this process).
 *
 * Results: printed, and bench/results/viewers-latest.json (one entry per database, the others kept).
 * Env: BENCH_THREADS (1000), BENCH_VIEWERS (1,10,50,200; 0 skips phase 1), BENCH_PACKETS (5),
 * BENCH_SUSTAINED_VIEWERS (50), BENCH_SECONDS (60; 0 skips phase 2), BENCH_PACKET_RATE (20),
 * BENCH_HEARTBEAT_RATE (50), BENCH_REFETCH_VIEWERS (5; 0 skips the old behaviour),
 * BENCH_REFETCH_SECONDS (20), BENCH_SEED_CHUNK (256 packets ingested at once while seeding; the
 * PostgreSQL figures in docs/performance.md used 16), BENCH_INSTANCES (0: in-process),
 * BENCH_BROWSERS (2 with BENCH_INSTANCES), BENCH_PORT (3600: the first instance's port),
 * BENCH_FLEET_RUNNING (1: each sustained row starts from a fleet already heartbeating, its last
 * heartbeats spread over the last minute, lib/sustained.ts fleetAlreadyRunning; 0: from a cold
 * fleet, every thread's first heartbeat of the row recorded in the ledger), BENCH_BUSY_CORES (0:
 * processes that each keep a core busy through the sustained rows, as a shared machine's other
 * work would; lib/busy-neighbours.ts).
 */
import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { boardPackets, threadKind, type BoardPlan } from "./lib/board-packets";
import { chooseDatabase, cleanUpDatabase, ROOT, SetupError } from "./lib/server";
import { fixed, flagFromEnv, gitRevision, portFromEnv, positiveNumber, writeJson } from "./lib/report";
import { startViewers, withoutNul } from "./lib/viewer-server";
import { busyNeighbours } from "./lib/busy-neighbours";
import { inProcessServer, nextServers, type ServerUnderTest } from "./lib/viewer-target";
import { measureOneAtATime, oneAtATimeTable, type OneAtATimeRow } from "./lib/one-at-a-time";
import { percentile, printTargets, runSustainedRow, settleServer, sustainedTable, targetChecks, bytesPerViewerEvent, totalCores, viewersOn, type SustainedRow, type SustainedRowPlan } from "./lib/sustained";
import type { ViewerMode } from "./lib/viewer-clients";
import { resetConfig } from "../lib/server/config";
import { closeDatabase, sqlExecutor } from "../lib/db/client";
import { Prisma } from "../lib/generated/prisma/client";
import { migrateDatabase } from "../lib/db/migrate/index";
import { ingestPacket } from "../lib/ingest/ingest";
import { createApiToken } from "../lib/auth/tokens";

const SEED_CHUNK = Number(process.env.BENCH_SEED_CHUNK ?? 256);
const NEVER_AFTER_MS = 10_000;
const MODES: ViewerMode[] = ["refetch", "delta"];
const RESULTS_FILE = path.join(ROOT, "bench", "results", "viewers-latest.json");
const BROWSER_PROJECT = "bench/watched";
const BROWSER_THREADS = 4;
const BROWSER_EVERY = 10;

/** How long the production servers' first watchdog round may take to record the seeded stale spells. */
const STALE_SPELLS_WAIT_MS = 120_000;

/**
 * A production server's watchdog (lib/board/watchdog/scheduler.ts) runs its first round at start,
 * which records the seeded fleet's stale spells (200 of them took 2.5 s here before decision 099)
 * while the rows begin: a one-off of a fleet gone quiet all at once, not the load the rows
 * measure. The rows start once the spells are recorded, as on a server that has been running.
 */
async function awaitStaleSpells(threads: number): Promise<void> {
  const expected = Array.from({ length: threads }, (_, thread) => threadKind(thread)).filter((kind) => kind === "stale").length;
  const started = performance.now();
  const sql = await sqlExecutor();
  for (;;) {
    const [row] = await sql.query<{ recorded: number | bigint }>(Prisma.sql`SELECT COUNT(*) AS "recorded" FROM "LedgerEvent" WHERE "kind" = 'thread_stale'`);
    const recorded = Number(row?.recorded ?? 0);
    if (recorded >= expected) {
      console.log(`bench: the servers' watchdog recorded the ${expected} seeded stale spells in ${fixed((performance.now() - started) / 1000, 1)} s`);
      return;
    }
    if (performance.now() - started > STALE_SPELLS_WAIT_MS) {
      console.log(`bench: the servers' watchdog recorded ${recorded} of the ${expected} seeded stale spells in ${STALE_SPELLS_WAIT_MS / 1000} s (BATON_STALE_HOURS above 30?); the rows start anyway`);
      return;
    }
    await sleepMs(250);
  }
}

/** A non-negative integer from the environment (0 turns a phase off). */
function countFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === "0") return 0;
  return positiveNumber(name, fallback, true);
}

function viewerCountsFromEnv(): number[] {
  if (process.env.BENCH_VIEWERS === "0") return [];
  const counts = (process.env.BENCH_VIEWERS ?? "1,10,50,200").split(",").map(Number);
  if (counts.some((count) => !Number.isInteger(count) || count < 1)) throw new Error("BENCH_VIEWERS must be positive integers, e.g. 1,10,50,200 (or 0)");
  return counts;
}

function settingsFromEnv() {
  const seconds = countFromEnv("BENCH_SECONDS", 60);
  const instances = countFromEnv("BENCH_INSTANCES", 0);
  return {
    instances,
    browsers: instances ? countFromEnv("BENCH_BROWSERS", 2) : 0,
    port: portFromEnv(3600),
    threads: positiveNumber("BENCH_THREADS", 1000, true),
    // Phase 1 ingests in this process: with production servers its CPU would not be theirs.
    oneAtATimeViewers: instances ? [] : viewerCountsFromEnv(),
    packets: positiveNumber("BENCH_PACKETS", 5, true),
    sustainedViewers: positiveNumber("BENCH_SUSTAINED_VIEWERS", 50, true),
    seconds,
    packetsPerSecond: positiveNumber("BENCH_PACKET_RATE", 20, false),
    heartbeatsPerSecond: positiveNumber("BENCH_HEARTBEAT_RATE", 50, false),
    refetchViewers: countFromEnv("BENCH_REFETCH_VIEWERS", 5),
    refetchSeconds: Math.min(seconds, positiveNumber("BENCH_REFETCH_SECONDS", 20, true)),
    fleetRunning: flagFromEnv("BENCH_FLEET_RUNNING", true),
    busyCores: countFromEnv("BENCH_BUSY_CORES", 0),
  };
}

/** The sustained rows: the case with deltas, then the old behaviour and deltas at a count the old behaviour can bear. */
function sustainedPlans(settings: ReturnType<typeof settingsFromEnv>): SustainedRowPlan[] {
  if (settings.seconds === 0) return [];
  const plans: SustainedRowPlan[] = [{ mode: "delta", viewers: settings.sustainedViewers, browsers: settings.browsers, seconds: settings.seconds, note: "" }];
  // The same load with no board open: what the viewers add to ingest, in the same run.
  plans.push({ mode: "delta", viewers: 0, browsers: 0, seconds: settings.refetchSeconds, note: "no viewers: baseline" });
  if (settings.refetchViewers === 0) return plans;
  const note = `old behaviour saturates: ${settings.refetchViewers} viewers, ${settings.refetchSeconds} s`;
  const small = { viewers: settings.refetchViewers, browsers: 0, seconds: settings.refetchSeconds };
  plans.push({ mode: "refetch", ...small, note }, { mode: "delta", ...small, note: "same as the refetch row" });
  return plans;
}

const summary = (row: SustainedRow) => ({
  mode: row.mode,
  viewers: row.viewers,
  chromium_viewers: row.browsers,
  chromium_cards: row.browserCards,
  chromium_to_dom_ms: row.browsers ? { p50: percentile(row.load.browserLatencies, 50), p95: percentile(row.load.browserLatencies, 95), max: row.load.browserLatencies.at(-1) ?? null, never: row.load.browserNever } : null,
  seconds: row.seconds,
  note: row.note,
  packets_per_second: row.packetsPerSecond,
  heartbeats_per_second: row.heartbeatsPerSecond,
  sent: { packets: row.load.packets, heartbeats: row.load.heartbeats, heartbeats_recorded: row.load.recordedHeartbeats, packet_errors: row.load.packetErrors, heartbeat_errors: row.load.heartbeatErrors, first_error: row.load.firstError, sender_lag_ms_max: row.load.maxLagMs },
  cpu_cores: { total: totalCores(row), server: row.serverCores, database_backends: row.databaseCores, viewers_and_sender: row.clientCores, other_processes: row.otherCores },
  ingest_ms: { p50: percentile(row.load.ingestMs, 50), p99: percentile(row.load.ingestMs, 99) },
  ingest_ms_on_viewers_loop: { p50: percentile(row.load.ingestMsOnViewersLoop, 50), p99: percentile(row.load.ingestMsOnViewersLoop, 99) },
  heartbeat_ms: { p50: percentile(row.load.heartbeatMs, 50), p99: percentile(row.load.heartbeatMs, 99) },
  sent_to_every_board_ms: { p50: percentile(row.load.fromSend, 50), p95: percentile(row.load.fromSend, 95) },
  to_every_board_ms: { p50: percentile(row.load.latencies, 50), p95: percentile(row.load.latencies, 95), max: row.load.latencies.at(-1) ?? null, never: row.load.never, of: row.load.latencies.length + row.load.never },
  bytes_per_viewer_per_event: bytesPerViewerEvent(row),
  rss_mib_max: row.rssMiB,
  opening_quiet_ms: row.openingQuietMs,
  fleet_running_ms: row.fleetRunningMs,
});

async function main() {
  const settings = settingsFromEnv();
  const loadBefore = os.loadavg();
  const runId = Date.now().toString(36);
  if (settings.instances > 1 && !(process.env.DATABASE_URL ?? "").startsWith("postgres")) {
    throw new SetupError("BENCH_INSTANCES above 1 needs DATABASE_URL=postgresql://... (instances share a PostgreSQL database, not a SQLite file)");
  }
  const db = await chooseDatabase(runId, false);
  process.env.DATABASE_URL = db.url;
  // One token per viewer, as many people would have; the rate limit is off so that the old behaviour is measured, not refused.
  process.env.BATON_RATE_LIMIT_PER_MINUTE ??= "0";
  resetConfig();
  let server: ServerUnderTest | null = null;
  let neighbours: { stop: () => void } | null = null;
  const viewersProcess = startViewers();
  const oneAtATime: OneAtATimeRow[] = [];
  const sustained: SustainedRow[] = [];
  try {
    await migrateDatabase(db.url);
    const plan: BoardPlan = { runId, threads: settings.threads, versions: 1, nowMs: Date.now() };
    const board = boardPackets(plan);
    const keys: string[] = [];
    const t0 = performance.now();
    for (let at = 0; at < settings.threads; at += SEED_CHUNK) {
      const chunk = Array.from({ length: Math.min(SEED_CHUNK, settings.threads - at) }, (_, i) => withoutNul(board.packet(at + i, 0), db.dialect));
      await Promise.all(chunk.map((packet) => ingestPacket(packet.body, { kind: "cli", actor: "bench" }, packet.receivedAt)));
      keys.push(...chunk.map((packet) => packet.body.thread as string));
    }
    const browserKeys: string[] = [];
    for (let i = 0; i < BROWSER_THREADS; i++) {
      const key = `${BROWSER_PROJECT}-${i}`;
      await ingestPacket({ thread: key, project: BROWSER_PROJECT, summary: "bench:viewers thread the Chromium viewers watch", next_action: "bench seeded" }, { kind: "cli", actor: "bench" });
      browserKeys.push(key);
    }
    console.log(`bench: ${settings.threads} threads seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s (${db.description})`);
    // Timed apart from the seeding: a stale .next-bench is built here, which takes longer than the seeding itself.
    const starting = performance.now();
    server = settings.instances ? await nextServers(settings.instances, settings.port, db.url) : await inProcessServer();
    console.log(`bench: server: ${server.what}, started in ${((performance.now() - starting) / 1000).toFixed(1)} s`);
    if (settings.instances) await awaitStaleSpells(settings.threads);
    const most = Math.max(1, settings.sustainedViewers, settings.refetchViewers, ...settings.oneAtATimeViewers);
    const tokens = await Promise.all(Array.from({ length: most }, (_, i) => createApiToken(`viewer-${i}`, ["packets:read"]).then((made) => made.token)));
    const serial = { next: 0 };
    for (const viewers of settings.oneAtATimeViewers) {
      for (const mode of MODES) {
        await viewersProcess.ask({ type: "open", viewers: viewersOn(server, tokens.slice(0, viewers)), mode, browsers: [], browserKeys: [] });
        const row = await measureOneAtATime(viewersProcess.ask, viewers, mode, keys, settings.packets, serial, NEVER_AFTER_MS);
        oneAtATime.push(row);
        await viewersProcess.ask({ type: "close" });
        await settleServer(server);
        console.log(`bench: ${viewers} viewers, ${mode}: ${fixed(row.cpuPerEvent, 1)} ms CPU per event`);
      }
    }
    const plans = sustainedPlans(settings);
    if (plans.length) {
      const context = {
        ask: viewersProcess.ask,
        viewersPid: viewersProcess.pid,
        server,
        viewerTokens: tokens,
        browserPath: `/?project=${encodeURIComponent(BROWSER_PROJECT)}`,
        browserKeys,
        browserProject: BROWSER_PROJECT,
        browserEvery: BROWSER_EVERY,
        packetToken: (await createApiToken("bench-agents", ["packets:write"])).token,
        heartbeatToken: (await createApiToken("bench-sessions", ["events:write"])).token,
        keys,
        database: db,
        packetsPerSecond: settings.packetsPerSecond,
        heartbeatsPerSecond: settings.heartbeatsPerSecond,
        neverAfterMs: NEVER_AFTER_MS,
        serial,
        fleetRunning: settings.fleetRunning,
      };
      if (settings.busyCores) {
        neighbours = busyNeighbours(settings.busyCores);
        console.log(`bench: ${settings.busyCores} busy process${settings.busyCores === 1 ? "" : "es"} beside the server through the sustained rows (BENCH_BUSY_CORES)`);
      }
      // Warm-up, not reported: the HTTP routes' first calls, the sessions' first heartbeats.
      await runSustainedRow(context, { mode: "delta", viewers: 1, browsers: 0, seconds: Math.min(3, settings.seconds), note: "warm-up" });
      for (const each of plans) sustained.push(await runSustainedRow(context, each));
    }
  } finally {
    neighbours?.stop();
    viewersProcess.stop();
    if (sustained.some((row) => row.load.firstError) && server?.logTail()) console.log(`\nlast server log lines:\n${server.logTail()}`);
    await server?.stop();
    // On PostgreSQL the live feed keeps its connection 30 s after its last stream (lib/events/ledger-feed.ts): the database is dropped after it.
    if (db.dialect === "postgresql") await sleepMs(31_000);
    await closeDatabase();
    await cleanUpDatabase(db);
  }
  const loadAfter = os.loadavg();
  const serverWhat = server?.what ?? "no server";
  const loads = `load average ${loadBefore.map((x) => x.toFixed(1)).join(" ")} at start, ${loadAfter.map((x) => x.toFixed(1)).join(" ")} at end, ${os.cpus().length} CPUs`;
  if (oneAtATime.length) {
    console.log(`\nviewers x events, ${settings.threads} active threads, ${settings.packets} packets per row, one at a time, ${db.dialect}:`);
    console.log(oneAtATimeTable(oneAtATime));
  }
  const checks = sustained.length ? targetChecks(sustained[0]!) : [];
  if (sustained.length) {
    console.log(
      `\nsustained, ${settings.threads} active threads, ${settings.packetsPerSecond} packets/s + ${settings.heartbeatsPerSecond} heartbeats/s sent open-loop over HTTP, ${db.dialect}` +
        ` on ${serverWhat} (CPU and RSS: the server's processes${db.dialect === "postgresql" ? ", CPU plus the run's database backends, shown in brackets" : ", SQLite included"}; an event is a packet or a heartbeat; never: viewer-packets not shown within ${NEVER_AFTER_MS / 1000} s):`,
    );
    console.log(sustainedTable(sustained));
    for (const row of sustained.filter((each) => each.load.firstError)) {
      console.log(`!!! ${row.mode}, ${row.viewers} viewers: ${row.load.packetErrors} packets and ${row.load.heartbeatErrors} heartbeats failed; the first: ${row.load.firstError}`);
    }
    const main = sustained[0]!;
    console.log(`\nissue 15's targets, on the first row (the issue's case is 50 viewers, 1,000 threads, 20 packets/s + 50 heartbeats/s, 60 s; this run: ${main.viewers}, ${settings.threads}, ${settings.packetsPerSecond} + ${settings.heartbeatsPerSecond}, ${main.seconds} s):`);
    printTargets(checks);
    const onLoop = main.load.ingestMsOnViewersLoop;
    console.log(`(ingest ms p50 / p99 as the viewers' event loop read the answers, as timed before 2026-12-04: ${Math.round(percentile(onLoop, 50))} / ${Math.round(percentile(onLoop, 99))})`);
  }
  console.log(`\n${loads}`);
  const previous = existsSync(RESULTS_FILE) ? (JSON.parse(readFileSync(RESULTS_FILE, "utf8")) as Record<string, unknown>) : {};
  writeJson(RESULTS_FILE, {
    ...previous,
    [db.dialect]: {
      finished_at: new Date().toISOString(),
      revision: gitRevision(),
      machine: { cpus: os.cpus().length, node: process.version, load_avg_before: loadBefore, load_avg_after: loadAfter },
      database: db.description,
      server: server?.what ?? null,
      settings,
      one_at_a_time: oneAtATime.map((row) => ({ ...row, latencies: undefined, p50: percentile(row.latencies, 50), p95: percentile(row.latencies, 95), max: row.latencies.at(-1) ?? null })),
      sustained: sustained.map(summary),
      targets: checks,
    },
  });
  console.log(`results: ${path.relative(ROOT, RESULTS_FILE)}`);
}

const sleepMs = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
