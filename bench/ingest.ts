/**
 * bench:ingest: how fast does the production server store ~4 KB packets, compared
 * with an empty route handler on the same server and machine?
 *
 * Builds (into .next-bench) if stale, starts `next start` on 127.0.0.1 against a
 * fresh, migrated SQLite file (or the caller's DATABASE_URL), warms up, then runs
 * the same closed-loop load against /api/v1/health (the baseline) and
 * /api/v1/packets (distinct packets over 200 threads). Prints a table, checks the
 * stored rows against the 201s, and writes bench/results/ingest-latest.json.
 *
 * Env: BENCH_SECONDS (10), BENCH_WARMUP_SECONDS (2), BENCH_CONCURRENCY (20),
 * BENCH_PORT (3300), BENCH_CPU_PROF_DIR (unset: no server CPU profile).
 * Exit: 0 measured cleanly (whatever PASS/MISS says), 1 could not set up or run,
 * 2 measured but with failed requests or a row count that does not match.
 */
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { errorCount, percentile, runLoad, type LoadOptions, type LoadResult } from "./lib/load";
import { packetFactory, TARGET_BYTES } from "./lib/packets";
import { fixed, formatTable, gitRevision, portFromEnv, positiveNumber, verdict, writeJson } from "./lib/report";
import {
  buildIfStale,
  chooseDatabase,
  cpuMs,
  createToken,
  DIST_DIR,
  machineBusyMs,
  memoryMiB,
  migrate,
  ROOT,
  startServer,
  stopServer,
  type BenchDatabase,
  type RunningServer,
} from "./lib/server";

const TARGET_PACKETS_PER_SECOND = 400;
const TARGET_RATIO = 0.5;
const THREADS = 200;
const RESULTS_FILE = path.join(ROOT, "bench", "results", "ingest-latest.json");

interface Settings {
  seconds: number;
  warmupSeconds: number;
  concurrency: number;
  port: number;
  cpuProfileDir: string | null;
}

function settingsFromEnv(): Settings {
  return {
    seconds: positiveNumber("BENCH_SECONDS", 10, false),
    warmupSeconds: positiveNumber("BENCH_WARMUP_SECONDS", 2, false),
    concurrency: positiveNumber("BENCH_CONCURRENCY", 20, true),
    port: portFromEnv(3300),
    cpuProfileDir: process.env.BENCH_CPU_PROF_DIR ? path.resolve(process.env.BENCH_CPU_PROF_DIR) : null,
  };
}

interface PhaseReport {
  name: string;
  load: LoadResult;
  rate: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU time per successful request: the server's, and this process's (the load generator). */
  serverCpuMsPerOk: number;
  clientCpuMsPerOk: number;
  /** Share of the machine's CPU (all cores) that other processes used meanwhile: noise. */
  othersCpuShare: number;
}

type Load = Omit<LoadOptions, "seconds">;

/** One load phase, with the CPU both sides spent on it. */
async function measure(name: string, server: RunningServer, seconds: number, load: Load): Promise<PhaseReport> {
  const serverBefore = cpuMs(server.pid);
  const clientBefore = process.cpuUsage();
  const machineBefore = machineBusyMs();
  const result = await runLoad({ ...load, seconds });
  const client = process.cpuUsage(clientBefore);
  const clientMs = (client.user + client.system) / 1000;
  const serverMs = cpuMs(server.pid) - serverBefore;
  const othersMs = machineBusyMs() - machineBefore - serverMs - clientMs;
  const perOk = (ms: number) => (result.ok ? ms / result.ok : NaN);
  return {
    name,
    load: result,
    rate: result.ok / result.seconds,
    p50: percentile(result.latencies, 50),
    p99: percentile(result.latencies, 99),
    errors: errorCount(result),
    serverCpuMsPerOk: perOk(serverMs),
    clientCpuMsPerOk: perOk(clientMs),
    othersCpuShare: Math.max(0, othersMs) / (result.seconds * 1000 * os.cpus().length),
  };
}

interface Rows {
  versions: number;
  threads: number;
}

/** Counts stored rows through a separate read-only connection (SQLite only). */
function countRows(sqliteFile: string | null): Rows | null {
  if (!sqliteFile) return null;
  const db = new Database(sqliteFile, { readonly: true, fileMustExist: true });
  try {
    const count = (table: string) => (db.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n;
    return { versions: count("PacketVersion"), threads: count("Thread") };
  } finally {
    db.close();
  }
}

function printTable(phases: PhaseReport[]): void {
  const header = ["phase", "requests", "ok", "errors", "req/s", "p50 ms", "p99 ms", "max ms", "srv CPU ms/req", "gen CPU ms/req", "others CPU"];
  const rows = phases.map((phase) => [
    phase.name,
    String(phase.load.requests),
    String(phase.load.ok),
    String(phase.errors),
    fixed(phase.rate, 1),
    fixed(phase.p50, 2),
    fixed(phase.p99, 2),
    fixed(phase.load.latencies.at(-1) ?? NaN, 2),
    fixed(phase.serverCpuMsPerOk, 3),
    fixed(phase.clientCpuMsPerOk, 3),
    `${fixed(phase.othersCpuShare * 100, 0)}%`,
  ]);
  console.log(formatTable(header, rows));
}

/** Failed requests are printed loudly: a benchmark with errors measures something else. */
function reportErrors(phase: PhaseReport, expected: number): void {
  if (!phase.errors) return;
  console.log(`\n!!! ${phase.name}: ${phase.errors} of ${phase.load.requests} requests did NOT answer ${expected}: ${JSON.stringify(phase.load.errors)}`);
  for (const sample of phase.load.errorSamples) console.log(`!!!   ${sample}`);
}

function phaseJson(phase: PhaseReport) {
  return {
    path: phase.load.path,
    seconds: phase.load.seconds,
    requests: phase.load.requests,
    ok: phase.load.ok,
    errors: phase.errors,
    errors_by_status: phase.load.errors,
    error_samples: phase.load.errorSamples,
    requests_per_second: phase.rate,
    latency_ms: {
      p50: phase.p50,
      p90: percentile(phase.load.latencies, 90),
      p99: phase.p99,
      max: phase.load.latencies.at(-1) ?? null,
    },
    body_bytes: phase.load.bodyBytes,
    server_cpu_ms_per_request: phase.serverCpuMsPerOk,
    load_generator_cpu_ms_per_request: phase.clientCpuMsPerOk,
    other_processes_cpu_share: phase.othersCpuShare,
  };
}

interface Outcome {
  warmups: PhaseReport[];
  empty: PhaseReport;
  ingest: PhaseReport;
  healthBodyBytes: number;
  /** PacketVersion rows added during the ingest phase; null when not SQLite. */
  stored: number | null;
  rowsAfter: Rows | null;
  memory: { rss: number; peak: number } | null;
  ratio: number;
  rateOk: boolean;
  ratioOk: boolean;
  failed: number;
  rowsMatch: boolean;
}

/** Warm-up, then the empty-handler baseline, then ingest, on the running server. */
async function runPhases(settings: Settings, server: RunningServer, database: BenchDatabase, token: string, runId: string, signal: AbortSignal): Promise<Outcome> {
  const packets = packetFactory(runId, THREADS, Date.now());
  let seq = 0;
  // The health handler never reads its body: one packet-sized body serves every request.
  const healthBody = packets.body(0, TARGET_BYTES);
  const common = { port: settings.port, token, concurrency: settings.concurrency, signal };
  const empty: Load = { ...common, path: "/api/v1/health", okStatus: 200, body: () => healthBody };
  const ingest: Load = { ...common, path: "/api/v1/packets", okStatus: 201, body: () => packets.body(seq++) };

  const warmups = [
    await measure("warm-up empty", server, settings.warmupSeconds, empty),
    await measure("warm-up ingest", server, settings.warmupSeconds, ingest),
  ];
  const emptyPhase = await measure("empty handler", server, settings.seconds, empty);
  const rowsBefore = countRows(database.sqliteFile);
  const ingestPhase = await measure("ingest", server, settings.seconds, ingest);
  const rowsAfter = countRows(database.sqliteFile);
  if (signal.aborted) throw new Error("interrupted");

  const ratio = ingestPhase.rate / emptyPhase.rate;
  const stored = rowsBefore && rowsAfter ? rowsAfter.versions - rowsBefore.versions : null;
  return {
    warmups,
    empty: emptyPhase,
    ingest: ingestPhase,
    healthBodyBytes: Buffer.byteLength(healthBody),
    stored,
    rowsAfter,
    memory: memoryMiB(server.pid),
    ratio,
    rateOk: ingestPhase.rate >= TARGET_PACKETS_PER_SECOND,
    ratioOk: ratio >= TARGET_RATIO,
    failed: [...warmups, emptyPhase, ingestPhase].reduce((sum, phase) => sum + phase.errors, 0),
    rowsMatch: stored === null || stored === ingestPhase.load.ok,
  };
}

function printReport(outcome: Outcome): void {
  const { empty, ingest, memory, stored, rowsAfter } = outcome;
  console.log("");
  printTable([empty, ingest]);
  for (const phase of outcome.warmups) reportErrors(phase, phase.load.path === ingest.load.path ? 201 : 200);
  reportErrors(empty, 200);
  reportErrors(ingest, 201);
  console.log("");
  console.log(`ratio ingest/empty rate: ${outcome.ratio.toFixed(3)}`);
  console.log(`target >= ${TARGET_PACKETS_PER_SECOND} packets/s: ${verdict(outcome.rateOk)} (${ingest.rate.toFixed(1)})`);
  console.log(`target ratio >= ${TARGET_RATIO}:       ${verdict(outcome.ratioOk)} (${outcome.ratio.toFixed(3)})`);
  const sizes = ingest.load.bodyBytes;
  console.log(`packet bodies: ${sizes.min}..${sizes.max} bytes, mean ${sizes.mean.toFixed(0)}; empty-handler body ${outcome.healthBodyBytes} bytes`);
  console.log(`server RSS at end: ${memory ? `${memory.rss.toFixed(1)} MiB (peak ${memory.peak.toFixed(1)} MiB)` : "unavailable"}`);
  if (stored === null || !rowsAfter) {
    console.log("rows stored: not checked (the row check reads SQLite files only)");
  } else {
    console.log(
      `rows stored: ${stored} PacketVersion rows during the ingest phase for ${ingest.load.ok} 201s: ${outcome.rowsMatch ? "match" : "MISMATCH !!!"} (${rowsAfter.versions} versions in ${rowsAfter.threads} threads in all)`,
    );
  }
  console.log(`load avg at end: ${os.loadavg().map((n) => n.toFixed(2)).join(" ")}`);
  console.log("caveat: the load generator shares the CPUs with the server (gen CPU); 'others CPU' is the machine share other processes took meanwhile");
  if (outcome.failed) console.log(`\n!!! ${outcome.failed} requests failed: these figures are NOT a clean measurement.`);
}

function resultsJson(outcome: Outcome, settings: Settings, database: BenchDatabase, serverPid: number, loadBefore: number[]) {
  return {
    finished_at: new Date().toISOString(),
    revision: gitRevision(),
    settings: { ...settings, threads: THREADS, target_body_bytes: TARGET_BYTES },
    machine: { cpus: os.cpus().length, node: process.version, load_avg_before: loadBefore, load_avg_after: os.loadavg() },
    database: database.tempDir ? "fresh SQLite (temp folder)" : database.sqliteFile ? "SQLite from DATABASE_URL" : "DATABASE_URL (not SQLite)",
    phases: { empty: phaseJson(outcome.empty), ingest: phaseJson(outcome.ingest) },
    warmup_errors: outcome.warmups.reduce((sum, phase) => sum + phase.errors, 0),
    ratio_ingest_to_empty: outcome.ratio,
    targets: {
      packets_per_second: { target: TARGET_PACKETS_PER_SECOND, actual: outcome.ingest.rate, pass: outcome.rateOk },
      ratio: { target: TARGET_RATIO, actual: outcome.ratio, pass: outcome.ratioOk },
    },
    server: { pid: serverPid, rss_mib: outcome.memory?.rss ?? null, peak_rss_mib: outcome.memory?.peak ?? null },
    rows: { stored_during_ingest: outcome.stored, total: outcome.rowsAfter, matches_201s: outcome.stored === null ? null : outcome.rowsMatch },
    clean: outcome.failed === 0 && outcome.rowsMatch,
  };
}

async function main(): Promise<number> {
  const settings = settingsFromEnv();
  const runId = randomBytes(6).toString("hex");
  const loadBefore = os.loadavg();
  const aborter = new AbortController();
  // Ctrl-C stops the load early; the finally below still stops the server and cleans up.
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => aborter.abort());

  const restored = buildIfStale();
  if (restored.length) console.log(`bench: put back ${restored.join(", ")} as before the build (next build points them at ${DIST_DIR})`);
  const database = chooseDatabase();
  let server: RunningServer | null = null;
  try {
    const migration = migrate(database.url);
    const token = createToken(database.url, `bench-${runId}`);
    server = await startServer(settings.port, database.url, settings.cpuProfileDir);
    const where = database.tempDir ? `fresh SQLite in ${database.tempDir}` : "database from DATABASE_URL";
    console.log(`bench: server pid ${server.pid} on 127.0.0.1:${settings.port}, ${where} (${migration})`);
    console.log(
      `bench: ${settings.concurrency} keep-alive clients, ${settings.warmupSeconds} s warm-up per route, then ${settings.seconds} s per route; load avg ${loadBefore.map((n) => n.toFixed(2)).join(" ")} on ${os.cpus().length} CPUs`,
    );

    const outcome = await runPhases(settings, server, database, token, runId, aborter.signal);
    printReport(outcome);
    writeJson(RESULTS_FILE, resultsJson(outcome, settings, database, server.pid, loadBefore));
    console.log(`results: ${path.relative(ROOT, RESULTS_FILE)}`);
    if (outcome.failed) console.log(`\nlast server log lines:\n${server.logTail()}`);
    return outcome.failed === 0 && outcome.rowsMatch ? 0 : 2;
  } finally {
    if (server) await stopServer(server);
    if (database.tempDir) rmSync(database.tempDir, { recursive: true, force: true });
    if (settings.cpuProfileDir) console.log(`bench: server CPU profile written to ${settings.cpuProfileDir}`);
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`bench: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  },
);
