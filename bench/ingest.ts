/**
 * bench:ingest: how fast does the production server store ~4 KB packets, compared
 * with an empty route handler on the same server and machine?
 *
 * Builds (into .next-bench) if stale, starts `next start` on 127.0.0.1 against a
 * fresh, migrated database, warms up, then runs the same closed-loop load against
 * /api/v1/health (the baseline) and /api/v1/packets (distinct packets over 200
 * threads). Prints a table, checks the stored rows against the 201s, and writes
 * bench/results/ingest-latest.json.
 *
 * The database (bench/lib/server.ts, chooseDatabase):
 *   - DATABASE_URL unset: a fresh SQLite file in a temp folder, removed at the end;
 *   - DATABASE_URL=file:PATH: that SQLite file, as it is;
 *   - DATABASE_URL=postgresql://...: a NEW database baton_bench_<run id> on that
 *     server, DROPPED at the end; the database the URL names is only where the run
 *     connects to create and drop it (the role needs CREATEDB).
 *
 * --instances N (or BENCH_INSTANCES=N), PostgreSQL only: N `next start` servers on
 * the same database (ports BENCH_PORT .. BENCH_PORT+N-1). After the one-instance
 * phases (empty handler, ingest on the first server) the same ingest load goes to
 * all N in turn (round robin, as a load balancer would), then to one instance again,
 * then the empty handler to all N: the report gives the rate of N instances together
 * against one, measured in the same run (against the mean of the one-instance phases
 * before and after, so that a machine getting busier or quieter meanwhile shows).
 *
 * Env: BENCH_SECONDS (10), BENCH_WARMUP_SECONDS (2), BENCH_CONCURRENCY (20),
 * BENCH_PORT (3300), BENCH_INSTANCES (1), BENCH_CPU_PROF_DIR (unset: no server CPU profile).
 * Exit: 0 measured cleanly (whatever PASS/MISS says), 1 could not set up or run,
 * 2 measured but with failed requests or a row count that does not match.
 */
import { randomBytes } from "node:crypto";
import os from "node:os";
import path from "node:path";
import { isPostgresqlUrl } from "../lib/server/config";
import { errorCount, percentile, runLoad, type LoadOptions, type LoadResult } from "./lib/load";
import { packetFactory, TARGET_BYTES } from "./lib/packets";
import { fixed, formatTable, gitRevision, portFromEnv, positiveNumber, verdict, writeJson } from "./lib/report";
import {
  buildIfStale,
  chooseDatabase,
  cleanUpDatabase,
  cpuMs,
  createToken,
  DIST_DIR,
  machineBusyMs,
  memoryMiB,
  migrate,
  ROOT,
  SetupError,
  startServer,
  stopServer,
  type BenchDatabase,
  type RunningServer,
} from "./lib/server";
import { databaseCpu, databaseStats, type DatabaseStats } from "./lib/stats";

const TARGET_PACKETS_PER_SECOND = 400;
const TARGET_RATIO = 0.5;
const THREADS = 200;
const RESULTS_FILE = path.join(ROOT, "bench", "results", "ingest-latest.json");

interface Settings {
  seconds: number;
  warmupSeconds: number;
  concurrency: number;
  port: number;
  instances: number;
  cpuProfileDir: string | null;
}

/** `--instances N` (or `--instances=N`) on the command line, else BENCH_INSTANCES, else 1. */
function instancesFromArgs(): number {
  const args = process.argv.slice(2);
  let raw: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--instances") raw = args[++i];
    else if (arg.startsWith("--instances=")) raw = arg.slice("--instances=".length);
    else throw new SetupError(`unknown argument ${arg} (the only option is --instances N; the others are environment variables)`);
  }
  if (raw === undefined) return positiveNumber("BENCH_INSTANCES", 1, true);
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new SetupError(`--instances must be a positive integer (got "${raw ?? ""}")`);
  return value;
}

function settingsFromEnv(): Settings {
  const port = portFromEnv(3300);
  const instances = instancesFromArgs();
  if (port + instances - 1 > 65535) throw new SetupError(`BENCH_PORT + instances - 1 must be at most 65535 (got ${port + instances - 1})`);
  return {
    seconds: positiveNumber("BENCH_SECONDS", 10, false),
    warmupSeconds: positiveNumber("BENCH_WARMUP_SECONDS", 2, false),
    concurrency: positiveNumber("BENCH_CONCURRENCY", 20, true),
    port,
    instances,
    cpuProfileDir: process.env.BENCH_CPU_PROF_DIR ? path.resolve(process.env.BENCH_CPU_PROF_DIR) : null,
  };
}

/** One `next start` and the port it listens on. */
interface Instance {
  server: RunningServer;
  port: number;
}

interface PhaseReport {
  name: string;
  /** How many servers took the requests (in turn). */
  instances: number;
  load: LoadResult;
  rate: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU time per successful request: the servers' (all instances), and this process's (the load generator). */
  serverCpuMsPerOk: number;
  clientCpuMsPerOk: number;
  /** The database server's (PostgreSQL backends of this run's database); NaN on SQLite, which runs inside the server. */
  databaseCpuMsPerOk: number;
  /** Share of the machine's CPU (all cores) that other processes used meanwhile: noise. */
  othersCpuShare: number;
  /** Ingest phases: PacketVersion rows added during the phase (to compare with `load.ok`), and the counts after it. */
  stored: number | null;
  rowsAfter: DatabaseStats | null;
}

type Load = Omit<LoadOptions, "seconds" | "ports">;

/** One load phase on `instances` (in turn), with the CPU every side spent on it. */
async function measure(name: string, instances: Instance[], seconds: number, load: Load, database: BenchDatabase): Promise<PhaseReport> {
  const serversCpu = () => instances.reduce((sum, instance) => sum + cpuMs(instance.server.pid), 0);
  const dbCpu = await databaseCpu(database);
  const serverBefore = serversCpu();
  const clientBefore = process.cpuUsage();
  const machineBefore = machineBusyMs();
  const result = await runLoad({ ...load, ports: instances.map((instance) => instance.port), seconds });
  const client = process.cpuUsage(clientBefore);
  const machineMs = machineBusyMs() - machineBefore;
  const clientMs = (client.user + client.system) / 1000;
  const serverMs = serversCpu() - serverBefore;
  const dbMs = dbCpu ? await dbCpu.since() : NaN;
  const othersMs = machineMs - serverMs - clientMs - (Number.isFinite(dbMs) ? dbMs : 0);
  const perOk = (ms: number) => (result.ok ? ms / result.ok : NaN);
  return {
    name,
    instances: instances.length,
    load: result,
    rate: result.ok / result.seconds,
    p50: percentile(result.latencies, 50),
    p99: percentile(result.latencies, 99),
    errors: errorCount(result),
    serverCpuMsPerOk: perOk(serverMs),
    clientCpuMsPerOk: perOk(clientMs),
    databaseCpuMsPerOk: perOk(dbMs),
    othersCpuShare: Math.max(0, othersMs) / (result.seconds * 1000 * os.cpus().length),
    stored: null,
    rowsAfter: null,
  };
}

/** An ingest phase, with the rows it stored, counted through a connection of its own before and after. */
async function measureIngest(name: string, instances: Instance[], seconds: number, load: Load, database: BenchDatabase): Promise<PhaseReport> {
  const before = await databaseStats(database);
  const phase = await measure(name, instances, seconds, load, database);
  const after = await databaseStats(database);
  return { ...phase, stored: after.rows.PacketVersion - before.rows.PacketVersion, rowsAfter: after };
}

function printTable(phases: PhaseReport[], dialect: BenchDatabase["dialect"]): void {
  const header = ["phase", "requests", "ok", "errors", "req/s", "p50 ms", "p99 ms", "max ms", "srv CPU ms/req", "db CPU ms/req", "gen CPU ms/req", "others CPU"];
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
    dialect === "sqlite" ? "in srv" : fixed(phase.databaseCpuMsPerOk, 3),
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
    instances: phase.instances,
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
    database_cpu_ms_per_request: Number.isFinite(phase.databaseCpuMsPerOk) ? phase.databaseCpuMsPerOk : null,
    load_generator_cpu_ms_per_request: phase.clientCpuMsPerOk,
    other_processes_cpu_share: phase.othersCpuShare,
    rows_stored: phase.stored,
  };
}

/** The phases with several instances (--instances N), and what they say against one. */
interface Multi {
  instances: number;
  ingest: PhaseReport;
  /** One instance again, after the N-instance phase. */
  ingestAgain: PhaseReport;
  empty: PhaseReport;
  /** N instances' ingest rate / the mean of the one-instance ingest rates before and after. */
  ratio: number;
  /** The same for the empty handler (one instance: the phase before). */
  emptyRatio: number;
}

interface Outcome {
  warmups: PhaseReport[];
  empty: PhaseReport;
  ingest: PhaseReport;
  multi: Multi | null;
  healthBodyBytes: number;
  rowsAfter: DatabaseStats;
  /** Per instance, at the end. */
  memory: ({ rss: number; peak: number } | null)[];
  ratio: number;
  rateOk: boolean;
  ratioOk: boolean;
  failed: number;
  rowsMatch: boolean;
}

/** Warm-up, then the empty-handler baseline, then ingest, on the running servers (then the N-instance phases). */
async function runPhases(settings: Settings, instances: Instance[], database: BenchDatabase, token: string, runId: string, signal: AbortSignal): Promise<Outcome> {
  const packets = packetFactory(runId, THREADS, Date.now());
  let seq = 0;
  // The health handler never reads its body: one packet-sized body serves every request.
  const healthBody = packets.body(0, TARGET_BYTES);
  const common = { token, concurrency: settings.concurrency, signal };
  const empty: Load = { ...common, path: "/api/v1/health", okStatus: 200, body: () => healthBody };
  const ingest: Load = { ...common, path: "/api/v1/packets", okStatus: 201, body: () => packets.body(seq++) };
  const one = instances.slice(0, 1);
  const n = instances.length;
  const label = (what: string, count: number) => (n === 1 ? what : `${what}, ${count} instance${count === 1 ? "" : "s"}`);

  // Warm-ups on every instance (in turn): each server's code paths are warm before its first measurement.
  const warmups = [
    await measure("warm-up empty", instances, settings.warmupSeconds, empty, database),
    await measure("warm-up ingest", instances, settings.warmupSeconds, ingest, database),
  ];
  const emptyPhase = await measure(label("empty handler", 1), one, settings.seconds, empty, database);
  const ingestPhase = await measureIngest(label("ingest", 1), one, settings.seconds, ingest, database);
  let multi: Multi | null = null;
  if (n > 1) {
    const together = await measureIngest(label("ingest", n), instances, settings.seconds, ingest, database);
    const again = await measureIngest(`${label("ingest", 1)} (again)`, one, settings.seconds, ingest, database);
    const emptyTogether = await measure(label("empty handler", n), instances, settings.seconds, empty, database);
    multi = {
      instances: n,
      ingest: together,
      ingestAgain: again,
      empty: emptyTogether,
      ratio: together.rate / ((ingestPhase.rate + again.rate) / 2),
      emptyRatio: emptyTogether.rate / emptyPhase.rate,
    };
  }
  if (signal.aborted) throw new Error("interrupted");

  const ratio = ingestPhase.rate / emptyPhase.rate;
  const measured = [...warmups, emptyPhase, ingestPhase, ...(multi ? [multi.ingest, multi.ingestAgain, multi.empty] : [])];
  const ingestPhases = measured.filter((phase) => phase.stored !== null);
  const last = ingestPhases.at(-1)!;
  return {
    warmups,
    empty: emptyPhase,
    ingest: ingestPhase,
    multi,
    healthBodyBytes: Buffer.byteLength(healthBody),
    rowsAfter: last.rowsAfter!,
    memory: instances.map((instance) => memoryMiB(instance.server.pid)),
    ratio,
    rateOk: ingestPhase.rate >= TARGET_PACKETS_PER_SECOND,
    ratioOk: ratio >= TARGET_RATIO,
    failed: measured.reduce((sum, phase) => sum + phase.errors, 0),
    rowsMatch: ingestPhases.every((phase) => phase.stored === phase.load.ok),
  };
}

function printReport(outcome: Outcome, database: BenchDatabase): void {
  const { empty, ingest, multi, memory, rowsAfter } = outcome;
  const measured = [empty, ingest, ...(multi ? [multi.ingest, multi.ingestAgain, multi.empty] : [])];
  console.log("");
  printTable(measured, database.dialect);
  for (const phase of outcome.warmups) reportErrors(phase, phase.load.path === ingest.load.path ? 201 : 200);
  for (const phase of measured) reportErrors(phase, phase.load.path === ingest.load.path ? 201 : 200);
  console.log("");
  console.log(`database: ${database.description}`);
  console.log(`ratio ingest/empty rate: ${outcome.ratio.toFixed(3)}`);
  console.log(`target >= ${TARGET_PACKETS_PER_SECOND} packets/s: ${verdict(outcome.rateOk)} (${ingest.rate.toFixed(1)})`);
  console.log(`target ratio >= ${TARGET_RATIO}:       ${verdict(outcome.ratioOk)} (${outcome.ratio.toFixed(3)})`);
  if (multi) {
    const mean = (ingest.rate + multi.ingestAgain.rate) / 2;
    console.log(
      `${multi.instances} instances together / 1 instance, ingest: ${multi.ratio.toFixed(3)} ` +
        `(${multi.ingest.rate.toFixed(1)} packets/s against ${mean.toFixed(1)}, the mean of ${ingest.rate.toFixed(1)} before and ${multi.ingestAgain.rate.toFixed(1)} after)`,
    );
    console.log(
      `${multi.instances} instances together / 1 instance, empty handler: ${multi.emptyRatio.toFixed(3)} (${multi.empty.rate.toFixed(1)} against ${empty.rate.toFixed(1)} req/s)`,
    );
    console.log(
      `caveat: every write transaction on PostgreSQL takes one advisory lock (decision 023), so writes take turns whatever the number of instances; ` +
        `and the ${multi.instances} servers, PostgreSQL and the load generator share ${os.cpus().length} CPUs`,
    );
  }
  const sizes = ingest.load.bodyBytes;
  console.log(`packet bodies: ${sizes.min}..${sizes.max} bytes, mean ${sizes.mean.toFixed(0)}; empty-handler body ${outcome.healthBodyBytes} bytes`);
  const rss = memory.map((m, i) => `${memory.length > 1 ? `#${i + 1} ` : ""}${m ? `${m.rss.toFixed(1)} MiB (peak ${m.peak.toFixed(1)} MiB)` : "unavailable"}`);
  console.log(`server RSS at end: ${rss.join("; ")}`);
  for (const phase of measured.filter((p) => p.stored !== null)) {
    console.log(`rows stored: ${phase.stored} PacketVersion rows during "${phase.name}" for ${phase.load.ok} 201s: ${phase.stored === phase.load.ok ? "match" : "MISMATCH !!!"}`);
  }
  console.log(`rows in all: ${rowsAfter.rows.PacketVersion} versions in ${rowsAfter.rows.Thread} threads, ${rowsAfter.rows.LedgerEvent} ledger events; database ${(rowsAfter.bytes / 2 ** 20).toFixed(0)} MiB`);
  console.log(`load avg at end: ${os.loadavg().map((x) => x.toFixed(2)).join(" ")}`);
  console.log(
    "caveat: the load generator shares the CPUs with the server (gen CPU); 'others CPU' is the machine share other processes took meanwhile" +
      (database.dialect === "postgresql" ? " (PostgreSQL's background processes included; its backends for this run are 'db CPU')" : ""),
  );
  if (outcome.failed) console.log(`\n!!! ${outcome.failed} requests failed: these figures are NOT a clean measurement.`);
}

function resultsJson(outcome: Outcome, settings: Settings, database: BenchDatabase, instances: Instance[], loadBefore: number[]) {
  const { multi } = outcome;
  return {
    finished_at: new Date().toISOString(),
    revision: gitRevision(),
    settings: { ...settings, threads: THREADS, target_body_bytes: TARGET_BYTES },
    machine: { cpus: os.cpus().length, node: process.version, load_avg_before: loadBefore, load_avg_after: os.loadavg() },
    database: { dialect: database.dialect, what: database.description },
    phases: {
      empty: phaseJson(outcome.empty),
      ingest: phaseJson(outcome.ingest),
      ...(multi ? { ingest_all_instances: phaseJson(multi.ingest), ingest_one_instance_again: phaseJson(multi.ingestAgain), empty_all_instances: phaseJson(multi.empty) } : {}),
    },
    warmup_errors: outcome.warmups.reduce((sum, phase) => sum + phase.errors, 0),
    ratio_ingest_to_empty: outcome.ratio,
    instances: multi
      ? { count: multi.instances, ratio_ingest_all_to_one: multi.ratio, ratio_empty_all_to_one: multi.emptyRatio, one_instance_ingest_rates: [outcome.ingest.rate, multi.ingestAgain.rate] }
      : { count: 1 },
    targets: {
      packets_per_second: { target: TARGET_PACKETS_PER_SECOND, actual: outcome.ingest.rate, pass: outcome.rateOk },
      ratio: { target: TARGET_RATIO, actual: outcome.ratio, pass: outcome.ratioOk },
    },
    servers: instances.map((instance, i) => ({ pid: instance.server.pid, port: instance.port, rss_mib: outcome.memory[i]?.rss ?? null, peak_rss_mib: outcome.memory[i]?.peak ?? null })),
    rows: { total: outcome.rowsAfter.rows, database_bytes: outcome.rowsAfter.bytes, matches_201s: outcome.rowsMatch },
    clean: outcome.failed === 0 && outcome.rowsMatch,
  };
}

async function main(): Promise<number> {
  const settings = settingsFromEnv();
  const runId = randomBytes(6).toString("hex");
  const loadBefore = os.loadavg();
  const aborter = new AbortController();
  // Ctrl-C stops the load early; the finally below still stops the servers and cleans up.
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => aborter.abort());

  if (settings.instances > 1 && !isPostgresqlUrl(process.env.DATABASE_URL ?? "")) {
    throw new SetupError(`--instances ${settings.instances} needs DATABASE_URL=postgresql://... (several instances share a PostgreSQL database, not a SQLite file)`);
  }
  const restored = buildIfStale();
  if (restored.length) console.log(`bench: put back ${restored.join(", ")} as before the build (next build points them at ${DIST_DIR})`);
  const database = await chooseDatabase(runId, true);
  const instances: Instance[] = [];
  try {
    const migration = migrate(database.url);
    const token = createToken(database.url, `bench-${runId}`);
    for (let i = 0; i < settings.instances; i++) {
      const port = settings.port + i;
      instances.push({ server: await startServer(port, database.url, settings.cpuProfileDir), port });
    }
    const servers = instances.map((instance) => `pid ${instance.server.pid} on 127.0.0.1:${instance.port}`).join(", ");
    console.log(`bench: ${instances.length === 1 ? "server" : `${instances.length} servers`} ${servers}, ${database.description} (${migration})`);
    console.log(
      `bench: ${settings.concurrency} keep-alive clients, ${settings.warmupSeconds} s warm-up per route, then ${settings.seconds} s per phase; ` +
        `load avg at start ${loadBefore.map((x) => x.toFixed(2)).join(" ")} on ${os.cpus().length} CPUs`,
    );

    const outcome = await runPhases(settings, instances, database, token, runId, aborter.signal);
    printReport(outcome, database);
    writeJson(RESULTS_FILE, resultsJson(outcome, settings, database, instances, loadBefore));
    console.log(`results: ${path.relative(ROOT, RESULTS_FILE)}`);
    if (outcome.failed) for (const instance of instances) console.log(`\nlast server log lines (port ${instance.port}):\n${instance.server.logTail()}`);
    return outcome.failed === 0 && outcome.rowsMatch ? 0 : 2;
  } finally {
    for (const instance of instances) await stopServer(instance.server);
    await cleanUpDatabase(database);
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
