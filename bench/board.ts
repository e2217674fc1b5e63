/**
 * bench:board: how fast is the board with 1,000 active threads, and does it stay
 * fast when their history grows tenfold?
 *
 * Builds (into .next-bench) if stale, migrates a fresh database, and seeds it
 * through the real ingest path (bench/lib/seed-board.ts, in a child process, no
 * server running): BENCH_THREADS threads x BENCH_VERSIONS versions, about 2 KB and
 * 3 risks each, whose active versions fill the needs-you (40 %), ready (40 %) and
 * stale (20 %) columns. It creates an admin with `baton user create` (pages need a
 * signed-in person; an admin's board shows every action). Then it starts `next start`
 * on 127.0.0.1, signs in through POST /api/v1/session, and measures:
 *   - GET /api/v1/board with a packets:read token, sequentially (p50, p95, bytes, cards);
 *   - server render of GET / with the session cookie to the end of the HTML,
 *     sequentially (p50, p95); HTML without the board's columns is a problem;
 *   - first view of / in headless Chromium, 1440x900, fresh context each time with
 *     the session cookie: Largest Contentful Paint and DOM nodes (median of
 *     BENCH_BROWSER_RUNS); a view that does not end on / showing the board's column
 *     headings (a redirect to /sign-in) stops the run (exit 1);
 *   - the server's RSS.
 * Then it stops the server, seeds (BENCH_HISTORY_FACTOR - 1) x BENCH_VERSIONS more
 * versions of the SAME threads, all OLDER than the active ones (so every card and
 * column stays the same; only the history grows), restarts the server and
 * measures the board API, the render of / and RSS again. Figures minutes apart
 * on a shared 2-core machine differ by what else ran meanwhile, so the history
 * target is judged on an interleaved comparison: a copy of the database taken
 * before the history, served on BENCH_PORT+1, and the server after it, asked in
 * turn (the sequential ratio is printed too).
 *
 * The database: a fresh SQLite file in a temp folder (DATABASE_URL=file:... is
 * ignored), or with DATABASE_URL=postgresql://... a NEW database baton_bench_<run id>
 * on that server, and its copy before the history (CREATE DATABASE ... TEMPLATE),
 * both DROPPED at the end; the database the URL names is only where the run connects
 * to create and drop them (the role needs CREATEDB). The same figures on both.
 * Prints a table with PASS/MISS per target and writes bench/results/board-latest.json.
 *
 * Env: BENCH_PORT (3301; BENCH_PORT+1 is used too), BENCH_THREADS (1000), BENCH_VERSIONS (20),
 * BENCH_HISTORY_FACTOR (10), BENCH_API_REQUESTS (30, after 5 warm-ups),
 * BENCH_RENDER_REQUESTS (15, after 3 warm-ups), BENCH_BROWSER_RUNS (3),
 * BENCH_CPU_PROF_DIR (unset: no server CPU profile; set: one profile per server
 * start, summarised at the end); DATABASE_URL (above).
 * Exit: 0 measured cleanly (whatever PASS/MISS says), 1 could not set up or run,
 * 2 measured, but with failed requests or data that is not what was seeded.
 */
import { randomBytes } from "node:crypto";
import { copyFileSync, existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import type { Browser } from "@playwright/test";
import { KIND_COLUMN, THREAD_KINDS, expectedColumnCounts, type BoardPlan, type SeedSummary } from "./lib/board-packets";
import { launchChromium, measureFirstView, type FirstView } from "./lib/browser";
import { percentile, runInterleaved, runSequential, type SequenceResult } from "./lib/load";
import { profilesIn, summariseProfile } from "./lib/profile";
import { fixed, formatTable, gitRevision, portFromEnv, positiveNumber, verdict, writeJson } from "./lib/report";
import { createOwnDatabase, type OwnDatabase } from "./lib/postgresql";
import { seedBoard } from "./lib/seeding";
import {
  buildIfStale,
  chooseDatabase,
  cleanUpDatabase,
  cpuMs,
  createPerson,
  createToken,
  DIST_DIR,
  machineBusyMs,
  memoryMiB,
  migrate,
  ROOT,
  SetupError,
  signIn,
  startServer,
  stopServer,
  type BenchDatabase,
  type BenchPerson,
  type RunningServer,
} from "./lib/server";
import { databaseCpu, databaseStats, type DatabaseStats } from "./lib/stats";

const TARGET_API_P50_MS = 150;
const TARGET_LCP_MS = 1500;
const TARGET_DOM_NODES = 1400;
const TARGET_HISTORY_RATIO = 1.3;
const API_WARMUPS = 5;
const RENDER_WARMUPS = 3;
const SETTLE_AFTER_LOAD_MS = 1000;
const VIEWPORT = { width: 1440, height: 900 };
const SEED_CHUNK = 256;
/** Above this share of the machine taken by other processes, a phase's wall-clock figures are called noisy. */
const NOISY_OTHERS_SHARE = 0.2;
const RESULTS_FILE = path.join(ROOT, "bench", "results", "board-latest.json");
/** Who the pages are measured for: an admin sees every action and link, the heaviest board. */
const PERSON_ROLE = "admin";
/** A board column's heading: the page measured must show these, not the sign-in form. */
const BOARD_COLUMN_HEADING = "main section[data-column] > h2";
/** Session cookie of the signed-in person, for a server's page requests. */
type Session = { name: string; value: string };

interface Settings {
  port: number;
  threads: number;
  versions: number;
  historyFactor: number;
  apiRequests: number;
  renderRequests: number;
  browserRuns: number;
  cpuProfileDir: string | null;
}

function settingsFromEnv(): Settings {
  const historyFactor = positiveNumber("BENCH_HISTORY_FACTOR", 10, true);
  if (historyFactor < 2) throw new SetupError(`BENCH_HISTORY_FACTOR must be at least 2 (got ${historyFactor})`);
  const port = portFromEnv(3301);
  if (port >= 65535) throw new SetupError("BENCH_PORT must be below 65535: the copy of the database is served on BENCH_PORT+1");
  return {
    port,
    threads: positiveNumber("BENCH_THREADS", 1000, true),
    versions: positiveNumber("BENCH_VERSIONS", 20, true),
    historyFactor,
    apiRequests: positiveNumber("BENCH_API_REQUESTS", 30, true),
    renderRequests: positiveNumber("BENCH_RENDER_REQUESTS", 15, true),
    browserRuns: positiveNumber("BENCH_BROWSER_RUNS", 3, true),
    cpuProfileDir: process.env.BENCH_CPU_PROF_DIR ? path.resolve(process.env.BENCH_CPU_PROF_DIR) : null,
  };
}

/** Problems make the run unclean (exit 2); notes are suspicious but leave the figures standing. */
interface Findings {
  problems: string[];
  notes: string[];
}

// ---------------------------------------------------------------------------------------------
// Seeding

interface SeedPhase {
  name: string;
  summary: SeedSummary;
  stats: DatabaseStats;
}

async function seedPhase(
  name: string,
  plan: BoardPlan,
  from: number,
  to: number,
  database: BenchDatabase,
  signal: AbortSignal,
  findings: Findings,
): Promise<SeedPhase> {
  const packets = (to - from) * plan.threads;
  console.log(`bench: seeding ${name}: versions ${from}..${to - 1} of ${plan.threads} threads = ${packets} packets, ${SEED_CHUNK} at a time...`);
  const summary = await seedBoard({ plan, from, to, chunk: SEED_CHUNK }, database.url, signal);
  const stats = await databaseStats(database);
  const { rows } = stats;
  console.log(
    `bench: seeded ${summary.packets} packets in ${summary.seconds.toFixed(1)} s (${(summary.packets / summary.seconds).toFixed(0)}/s, ` +
      `${summary.commits} commits, ${summary.meanBytes.toFixed(0)} bytes each on average): ${summary.activeOnArrival} became active, ` +
      `${summary.supersededOnArrival} stored as older history, ${summary.duplicates} duplicates, ${summary.failed} failed`,
  );
  console.log(
    `bench: rows now: Thread ${rows.Thread}, PacketVersion ${rows.PacketVersion}, Risk ${rows.Risk}, AgentQuestion ${rows.AgentQuestion}, ` +
      `LedgerEvent ${rows.LedgerEvent}; ${stats.activeThreads} active threads; database ${(stats.bytes / 2 ** 20).toFixed(0)} MiB`,
  );
  if (summary.failed || summary.duplicates) {
    findings.problems.push(`seeding ${name}: ${summary.failed} packets failed, ${summary.duplicates} duplicates (${summary.failureSamples.join(" | ")})`);
  }
  const expectedVersions = to * plan.threads;
  if (rows.PacketVersion !== expectedVersions || rows.Risk !== expectedVersions * 3 || stats.activeThreads !== plan.threads) {
    findings.problems.push(
      `after seeding ${name}: ${rows.PacketVersion} versions, ${rows.Risk} risks, ${stats.activeThreads} active threads; expected ${expectedVersions}, ${expectedVersions * 3}, ${plan.threads}`,
    );
  }
  return { name, summary, stats };
}

// ---------------------------------------------------------------------------------------------
// Measurements on a running server

interface CpuWindow {
  serverMs: number;
  clientMs: number;
  machineMs: number;
  /** The PostgreSQL backends of `databases` (stats.ts, databaseCpu), each; NaN on SQLite, which runs inside the server. */
  databaseMs: number[];
  seconds: number;
}

/** What `ms` leaves for other processes: database time that could not be measured counts as 0. */
const known = (ms: number) => (Number.isFinite(ms) ? ms : 0);

async function withCpu<T>(server: RunningServer, databases: BenchDatabase[], work: () => Promise<T>): Promise<{ value: T; cpu: CpuWindow }> {
  const dbCpu = await Promise.all(databases.map((database) => databaseCpu(database)));
  const serverBefore = cpuMs(server.pid);
  const clientBefore = process.cpuUsage();
  const machineBefore = machineBusyMs();
  const started = performance.now();
  const value = await work();
  const client = process.cpuUsage(clientBefore);
  const cpu = {
    serverMs: cpuMs(server.pid) - serverBefore,
    clientMs: (client.user + client.system) / 1000,
    machineMs: machineBusyMs() - machineBefore,
    seconds: (performance.now() - started) / 1000,
  };
  const databaseMs = await Promise.all(dbCpu.map((db) => (db ? db.since() : Promise.resolve(NaN))));
  return { value, cpu: { ...cpu, databaseMs } };
}

interface SequencePhase {
  name: string;
  result: SequenceResult;
  warmups: number;
  p50: number;
  p95: number;
  ttfbP50: number;
  errors: number;
  serverCpuMsPerRequest: number;
  /** The database server's per request (PostgreSQL backends); NaN on SQLite, where it is part of the server's. */
  databaseCpuMsPerRequest: number;
  /** Share of the machine's CPU (all cores) that processes other than the server, the database's backends and this one used meanwhile. */
  othersCpuShare: number;
}

/** Warm-ups first, then the measured requests, with the CPU that they (and only they) cost. */
async function measureSequence(
  name: string,
  server: RunningServer,
  database: BenchDatabase,
  options: { port: number; path: string; headers: Record<string, string>; warmups: number; requests: number; signal: AbortSignal },
): Promise<SequencePhase> {
  const common = { port: options.port, path: options.path, headers: options.headers, okStatus: 200, signal: options.signal };
  const warm = await runSequential({ ...common, warmups: options.warmups, requests: 0 });
  const { value: result, cpu } = await withCpu(server, [database], () => runSequential({ ...common, warmups: 0, requests: options.requests }));
  const databaseMs = cpu.databaseMs[0] ?? NaN;
  const othersMs = cpu.machineMs - cpu.serverMs - cpu.clientMs - known(databaseMs);
  result.warmupErrors = warm.warmupErrors;
  return {
    name,
    result,
    warmups: options.warmups,
    p50: percentile(result.latencies, 50),
    p95: percentile(result.latencies, 95),
    ttfbP50: percentile(result.ttfb, 50),
    errors: Object.values(result.errors).reduce((sum, n) => sum + n, 0) + result.warmupErrors,
    serverCpuMsPerRequest: result.requests ? cpu.serverMs / result.requests : NaN,
    databaseCpuMsPerRequest: result.requests ? databaseMs / result.requests : NaN,
    othersCpuShare: Math.max(0, othersMs) / (cpu.seconds * 1000 * os.cpus().length),
  };
}

interface ApiPhase extends SequencePhase {
  total: number | null;
  columns: Record<string, number>;
  gzipBytes: number | null;
}

async function measureApi(
  name: string,
  server: RunningServer,
  database: BenchDatabase,
  settings: Settings,
  token: string,
  signal: AbortSignal,
  findings: Findings,
): Promise<ApiPhase> {
  const phase = await measureSequence(name, server, database, {
    port: settings.port,
    path: "/api/v1/board",
    headers: { authorization: `Bearer ${token}`, accept: "application/json" },
    warmups: API_WARMUPS,
    requests: settings.apiRequests,
    signal,
  });
  const { result } = phase;
  let total: number | null = null;
  const columns: Record<string, number> = {};
  if (result.lastBody) {
    const board = JSON.parse(result.lastBody.toString("utf8")) as { total: number; columns: { id: string; count: number; cards: unknown[] }[] };
    total = board.total;
    for (const column of board.columns) {
      columns[column.id] = column.count;
      if (column.cards.length !== column.count) findings.problems.push(`${name}: column ${column.id} says ${column.count} cards but holds ${column.cards.length}`);
    }
  }
  if (phase.errors) findings.problems.push(`${name}: ${phase.errors} requests did not answer 200: ${JSON.stringify(result.errors)} ${result.errorSamples.join(" | ")}`);
  if (total !== settings.threads) findings.problems.push(`${name}: the board holds ${total ?? "no"} cards, not ${settings.threads}`);
  const expected = expectedColumnCounts(settings.threads);
  const differ = Object.keys(expected).filter((id) => (columns[id] ?? 0) !== expected[id]);
  if (result.lastBody && differ.length) {
    findings.problems.push(`${name}: columns ${JSON.stringify(columns)} differ from the seeded ${JSON.stringify(expected)}`);
  }
  return { ...phase, total, columns, gzipBytes: result.lastBody ? gzipSync(result.lastBody).length : null };
}

interface RenderPhase extends SequencePhase {
  /** Cards in the server-rendered HTML. */
  cardsInHtml: number | null;
  /** Board columns in the server-rendered HTML: none means it was not the board. */
  columnsInHtml: number | null;
  /** Suspense boundaries streamed after the shell (React reveals them at least 300 ms after the first paint). */
  streamedBoundaries: number | null;
}

async function measureRender(
  name: string,
  server: RunningServer,
  database: BenchDatabase,
  settings: Settings,
  session: Session,
  signal: AbortSignal,
  findings: Findings,
): Promise<RenderPhase> {
  const phase = await measureSequence(name, server, database, {
    port: settings.port,
    path: "/",
    headers: { accept: "text/html", cookie: `${session.name}=${session.value}` },
    warmups: RENDER_WARMUPS,
    requests: settings.renderRequests,
    signal,
  });
  const { result } = phase;
  if (phase.errors) findings.problems.push(`${name}: ${phase.errors} requests did not answer 200: ${JSON.stringify(result.errors)} ${result.errorSamples.join(" | ")}`);
  const html = result.lastBody?.toString("utf8") ?? null;
  const count = (needle: string) => (html === null ? null : html.split(needle).length - 1);
  const columnsInHtml = count("data-column=");
  if (html !== null && !columnsInHtml) findings.problems.push(`${name}: the HTML of / holds no board column: it is not the board (${html.slice(0, 200)})`);
  return { ...phase, cardsInHtml: count('data-testid="board-card"'), columnsInHtml, streamedBoundaries: count('<div hidden id="S:') };
}

interface BrowserPhase {
  runs: FirstView[];
  median: {
    lcpMs: number | null;
    fcpMs: number | null;
    ttfbMs: number;
    responseEndMs: number;
    domContentLoadedMs: number;
    loadMs: number;
    longTaskMs: number;
    scriptMs: number;
    domNodes: number;
    cards: number;
    documentTransferBytes: number;
    documentDecodedBytes: number;
    boardApiRequests: number;
  };
  lcpElement: string | null;
  errors: string[];
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (!sorted.length) return NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

async function measureBrowser(browser: Browser, settings: Settings, session: Session, signal: AbortSignal, findings: Findings): Promise<BrowserPhase> {
  const runs: FirstView[] = [];
  for (let run = 0; run < settings.browserRuns && !signal.aborted; run++) {
    const view = await measureFirstView(browser, {
      url: `http://127.0.0.1:${settings.port}/`,
      viewport: VIEWPORT,
      settleMs: SETTLE_AFTER_LOAD_MS,
      countSelector: '[data-testid="board-card"]',
      watchPath: "/api/v1/board",
      cookies: [session],
      expect: { path: "/", selector: BOARD_COLUMN_HEADING, what: "the board" },
    });
    runs.push(view);
    console.log(
      `bench: first view ${run + 1}: LCP ${fixed(view.lcpMs ?? NaN, 0)} ms, FCP ${fixed(view.fcpMs ?? NaN, 0)} ms, TTFB ${fixed(view.ttfbMs, 0)} ms, ` +
        `HTML done ${fixed(view.responseEndMs, 0)} ms, DOMContentLoaded ${fixed(view.domContentLoadedMs, 0)} ms, load ${fixed(view.loadMs, 0)} ms; ` +
        `${view.domNodes} DOM nodes, ${view.counted} cards in the DOM, ${view.watchedRequests} board API requests; ` +
        `long tasks ${view.longTasks.count} (${fixed(view.longTasks.totalMs, 0)} ms); LCP candidates: ${view.lcpCandidates.map((c) => `${fixed(c.ms, 0)} ms ${c.element.slice(0, 24)}`).join(" | ")}`,
    );
  }
  if (signal.aborted) throw new Error("interrupted");
  const lcps = runs.map((view) => view.lcpMs).filter((ms): ms is number => ms !== null);
  const sortedByLcp = [...runs].sort((a, b) => (a.lcpMs ?? Infinity) - (b.lcpMs ?? Infinity));
  const errors = [...new Set(runs.flatMap((view) => view.errors))];
  const phase: BrowserPhase = {
    runs,
    median: {
      lcpMs: lcps.length ? median(lcps) : null,
      fcpMs: median(runs.flatMap((view) => (view.fcpMs === null ? [] : [view.fcpMs]))),
      ttfbMs: median(runs.map((view) => view.ttfbMs)),
      responseEndMs: median(runs.map((view) => view.responseEndMs)),
      domContentLoadedMs: median(runs.map((view) => view.domContentLoadedMs)),
      loadMs: median(runs.map((view) => view.loadMs)),
      longTaskMs: median(runs.map((view) => view.longTasks.totalMs)),
      scriptMs: median(runs.map((view) => view.mainThreadMs.script)),
      domNodes: median(runs.map((view) => view.domNodes)),
      cards: median(runs.map((view) => view.counted)),
      documentTransferBytes: median(runs.map((view) => view.documentTransferBytes)),
      documentDecodedBytes: median(runs.map((view) => view.documentDecodedBytes)),
      boardApiRequests: median(runs.map((view) => view.watchedRequests)),
    },
    lcpElement: sortedByLcp[Math.floor(sortedByLcp.length / 2)]?.lcpElement ?? null,
    errors,
  };
  if (lcps.length < runs.length) findings.problems.push(`browser: ${runs.length - lcps.length} of ${runs.length} first views reported no LCP`);
  if (runs.some((view) => view.counted === 0)) findings.problems.push("browser: a first view showed no board cards");
  if (errors.length) findings.notes.push(`browser: the page reported errors: ${errors.slice(0, 5).join(" | ")}`);
  if (phase.median.boardApiRequests > 0) {
    findings.notes.push(
      `browser: the page fetched /api/v1/board ${phase.median.boardApiRequests} time(s) during its first view although the server rendered the board`,
    );
  }
  return phase;
}

interface ServerRun {
  api: ApiPhase;
  render: RenderPhase;
  browser: BrowserPhase | null;
  memory: { rss: number; peak: number } | null;
  pid: number;
}

async function measureServer(
  label: string,
  settings: Settings,
  database: BenchDatabase,
  token: string,
  person: BenchPerson,
  withBrowser: boolean,
  signal: AbortSignal,
  findings: Findings,
  /** More measurements on the running server, after the others. */
  andThen?: (server: RunningServer) => Promise<void>,
): Promise<ServerRun> {
  // Stopped in the finally below: no server outlives its measurements (or a failure).
  const server = await startServer(settings.port, database.url, settings.cpuProfileDir);
  console.log(`bench: server pid ${server.pid} on 127.0.0.1:${settings.port} (${label}); load avg ${os.loadavg().map((n) => n.toFixed(2)).join(" ")}`);
  let browser: Browser | null = null;
  try {
    const session = await signIn(settings.port, person);
    const api = await measureApi(`board API (${label})`, server, database, settings, token, signal, findings);
    console.log(`bench: board API (${label}): p50 ${fixed(api.p50, 1)} ms, p95 ${fixed(api.p95, 1)} ms, ${api.total} cards, ${api.result.bytes.max} bytes`);
    const render = await measureRender(`render / (${label})`, server, database, settings, session, signal, findings);
    console.log(`bench: render / (${label}): p50 ${fixed(render.p50, 1)} ms, p95 ${fixed(render.p95, 1)} ms, ${render.result.bytes.max} bytes of HTML`);
    let browserPhase: BrowserPhase | null = null;
    if (withBrowser) {
      browser = await launchChromium();
      browserPhase = await measureBrowser(browser, settings, session, signal, findings);
    }
    if (signal.aborted) throw new Error("interrupted");
    const memory = memoryMiB(server.pid);
    if (andThen) await andThen(server);
    if (findings.problems.length) console.log(`\nlast server log lines:\n${server.logTail()}\n`);
    return { api, render, browser: browserPhase, memory, pid: server.pid };
  } finally {
    if (browser) await browser.close();
    await stopServer(server);
  }
}

interface Interleaved {
  /** The server on the copy of the database before the history. */
  pid: number;
  before: SequencePhase;
  after: SequencePhase;
  ratio: number;
  cpuRatio: number;
}

/**
 * The board API of a copy of the database taken before the history was seeded
 * (its own server on port+1) and of the running server after it, request by
 * request in turn: both see the same background load, so their ratio is fair
 * on a shared machine where the sequential before/after figures are minutes apart.
 */
async function compareInterleaved(
  settings: Settings,
  snapshotDatabase: BenchDatabase,
  afterServer: RunningServer,
  afterDatabase: BenchDatabase,
  token: string,
  signal: AbortSignal,
  findings: Findings,
): Promise<Interleaved> {
  const port = settings.port + 1;
  const headers = { authorization: `Bearer ${token}`, accept: "application/json" };
  const snapshot = await startServer(port, snapshotDatabase.url, settings.cpuProfileDir);
  console.log(`bench: server pid ${snapshot.pid} on 127.0.0.1:${port} (copy of the database before the history), for an interleaved comparison`);
  try {
    const warm = await runSequential({ port, path: "/api/v1/board", headers, warmups: API_WARMUPS, requests: 0, okStatus: 200, signal });
    const cpuBefore = { snapshot: cpuMs(snapshot.pid), after: cpuMs(afterServer.pid) };
    const { value: results, cpu } = await withCpu(afterServer, [snapshotDatabase, afterDatabase], () =>
      runInterleaved({
        targets: [
          { port, path: "/api/v1/board", headers },
          { port: settings.port, path: "/api/v1/board", headers },
        ],
        rounds: settings.apiRequests,
        okStatus: 200,
        signal,
      }),
    );
    const [before, after] = results as [SequenceResult, SequenceResult];
    before.warmupErrors = warm.warmupErrors;
    const snapshotMs = cpuMs(snapshot.pid) - cpuBefore.snapshot;
    const afterMs = cpuMs(afterServer.pid) - cpuBefore.after;
    const [snapshotDbMs = NaN, afterDbMs = NaN] = cpu.databaseMs;
    const othersMs = cpu.machineMs - snapshotMs - afterMs - cpu.clientMs - known(snapshotDbMs) - known(afterDbMs);
    const othersShare = Math.max(0, othersMs) / (cpu.seconds * 1000 * os.cpus().length);
    const phase = (name: string, result: SequenceResult, serverMs: number, databaseMs: number): SequencePhase => ({
      name,
      result,
      warmups: API_WARMUPS,
      p50: percentile(result.latencies, 50),
      p95: percentile(result.latencies, 95),
      ttfbP50: percentile(result.ttfb, 50),
      errors: Object.values(result.errors).reduce((sum, n) => sum + n, 0) + result.warmupErrors,
      serverCpuMsPerRequest: result.requests ? serverMs / result.requests : NaN,
      databaseCpuMsPerRequest: result.requests ? databaseMs / result.requests : NaN,
      othersCpuShare: othersShare,
    });
    const pair: Interleaved = {
      pid: snapshot.pid,
      before: phase("board API interleaved: before", before, snapshotMs, snapshotDbMs),
      after: phase(`board API interleaved: x${settings.historyFactor}`, after, afterMs, afterDbMs),
      ratio: NaN,
      cpuRatio: NaN,
    };
    pair.ratio = pair.after.p50 / pair.before.p50;
    pair.cpuRatio = pair.after.serverCpuMsPerRequest / pair.before.serverCpuMsPerRequest;
    for (const side of [pair.before, pair.after]) {
      if (side.errors) findings.problems.push(`${side.name}: ${side.errors} requests did not answer 200: ${JSON.stringify(side.result.errors)} ${side.result.errorSamples.join(" | ")}`);
    }
    if (before.lastBody && after.lastBody && before.lastBody.length !== after.lastBody.length) {
      findings.notes.push(`the board before and after the history differ in size (${before.lastBody.length} vs ${after.lastBody.length} bytes): the history changed the cards`);
    }
    console.log(
      `bench: board API interleaved, ${settings.apiRequests} rounds: before p50 ${fixed(pair.before.p50, 1)} ms, after x${settings.historyFactor} p50 ${fixed(pair.after.p50, 1)} ms: ${fixed(pair.ratio, 2)}x`,
    );
    return pair;
  } finally {
    await stopServer(snapshot);
  }
}

// ---------------------------------------------------------------------------------------------
// Report

interface Outcome {
  seeds: SeedPhase[];
  before: ServerRun;
  after: ServerRun;
  ratio: number;
  /** The same ratio for the server's CPU time per request: less sensitive to what else runs on the machine. */
  cpuRatio: number;
  /** Before (a copy) and after, request by request in turn: the fair comparison, and the one the target is judged on. */
  interleaved: Interleaved;
  targets: { name: string; target: string; actual: string; pass: boolean }[];
}

function targetsFor(before: ServerRun, interleaved: Interleaved): Outcome["targets"] {
  const lcp = before.browser?.median.lcpMs ?? NaN;
  const nodes = before.browser?.median.domNodes ?? NaN;
  return [
    { name: "board API p50", target: `< ${TARGET_API_P50_MS} ms`, actual: `${fixed(before.api.p50, 1)} ms`, pass: before.api.p50 < TARGET_API_P50_MS },
    { name: "Largest Contentful Paint", target: `< ${TARGET_LCP_MS} ms`, actual: `${fixed(lcp, 0)} ms`, pass: lcp < TARGET_LCP_MS },
    { name: "DOM nodes on first view", target: `< ${TARGET_DOM_NODES}`, actual: fixed(nodes, 0), pass: nodes < TARGET_DOM_NODES },
    {
      name: "board API p50, tenfold history / before",
      target: `< ${TARGET_HISTORY_RATIO}x`,
      actual: `${fixed(interleaved.ratio, 2)}x (${fixed(interleaved.before.p50, 1)} -> ${fixed(interleaved.after.p50, 1)} ms, interleaved)`,
      pass: interleaved.ratio < TARGET_HISTORY_RATIO,
    },
  ];
}

function printReport(outcome: Outcome, findings: Findings, database: BenchDatabase): void {
  const { before, after } = outcome;
  const percent = (share: number) => `${fixed(share * 100, 0)}%`;
  console.log("");
  console.log(
    formatTable(
      ["seeding", "packets", "seconds", "packets/s", "PacketVersion rows", "Risk rows", "active threads", "database MiB"],
      outcome.seeds.map(({ name, summary, stats }) => [
        name,
        String(summary.packets),
        fixed(summary.seconds, 1),
        fixed(summary.packets / summary.seconds, 0),
        String(stats.rows.PacketVersion),
        String(stats.rows.Risk),
        String(stats.activeThreads),
        fixed(stats.bytes / 2 ** 20, 0),
      ]),
    ),
  );
  console.log("");
  const sequences = [before.api, before.render, after.api, after.render, outcome.interleaved.before, outcome.interleaved.after];
  console.log(
    formatTable(
      ["requests, one at a time", "n", "errors", "p50 ms", "p95 ms", "max ms", "TTFB p50 ms", "bytes", "srv CPU ms/req", "db CPU ms/req", "others CPU"],
      sequences.map((phase) => [
        phase.name,
        String(phase.result.requests),
        String(phase.errors),
        fixed(phase.p50, 1),
        fixed(phase.p95, 1),
        fixed(phase.result.latencies.at(-1) ?? NaN, 1),
        fixed(phase.ttfbP50, 1),
        String(phase.result.bytes.max),
        fixed(phase.serverCpuMsPerRequest, 1),
        database.dialect === "sqlite" ? "in srv" : fixed(phase.databaseCpuMsPerRequest, 1),
        percent(phase.othersCpuShare),
      ]),
    ),
  );
  const columnLine = (api: ApiPhase) => Object.entries(api.columns).map(([id, count]) => `${id} ${count}`).join(", ");
  console.log("");
  console.log(`board (before): ${before.api.total} cards: ${columnLine(before.api)}; JSON ${before.api.result.bytes.max} bytes (${before.api.gzipBytes ?? "?"} gzipped)`);
  console.log(`board (after):  ${after.api.total} cards: ${columnLine(after.api)}`);
  console.log(
    `server-rendered HTML of / (signed in as ${PERSON_ROLE}): ${before.render.result.bytes.max} bytes with ${before.render.columnsInHtml ?? "?"} columns and ${before.render.cardsInHtml ?? "?"} cards in it, ` +
      `${before.render.streamedBoundaries ?? "?"} Suspense boundary(ies) streamed after the shell`,
  );
  const browser = before.browser;
  if (browser) {
    const m = browser.median;
    console.log(
      `first view (median of ${browser.runs.length}, ${VIEWPORT.width}x${VIEWPORT.height}): LCP ${fixed(m.lcpMs ?? NaN, 0)} ms (${browser.lcpElement ?? "no element"}), ` +
        `FCP ${fixed(m.fcpMs ?? NaN, 0)} ms, TTFB ${fixed(m.ttfbMs, 0)} ms, HTML done ${fixed(m.responseEndMs, 0)} ms, DOMContentLoaded ${fixed(m.domContentLoadedMs, 0)} ms, ` +
        `load ${fixed(m.loadMs, 0)} ms, long tasks ${fixed(m.longTaskMs, 0)} ms, script ${fixed(m.scriptMs, 0)} ms, ${m.domNodes} DOM nodes, ${m.cards} cards in the DOM, ` +
        `document ${m.documentTransferBytes} bytes sent (${m.documentDecodedBytes} decoded), ${m.boardApiRequests} board API request(s) by the page`,
    );
  }
  const rss = (run: ServerRun) => (run.memory ? `${run.memory.rss.toFixed(1)} MiB (peak ${run.memory.peak.toFixed(1)} MiB)` : "unavailable");
  console.log(`server RSS after the measurements: ${rss(before)}; after the tenfold history: ${rss(after)}`);
  const { interleaved } = outcome;
  console.log(
    `board API after/before the tenfold history, measured minutes apart: p50 ${fixed(outcome.ratio, 2)}x (${fixed(before.api.p50, 1)} -> ${fixed(after.api.p50, 1)} ms), ` +
      `server CPU per request ${fixed(outcome.cpuRatio, 2)}x (${fixed(before.api.serverCpuMsPerRequest, 1)} -> ${fixed(after.api.serverCpuMsPerRequest, 1)} ms)`,
  );
  console.log(
    `board API after/before the tenfold history, interleaved (a copy of the database before, on port+1): p50 ${fixed(interleaved.ratio, 2)}x ` +
      `(${fixed(interleaved.before.p50, 1)} -> ${fixed(interleaved.after.p50, 1)} ms), server CPU per request ${fixed(interleaved.cpuRatio, 2)}x ` +
      `(${fixed(interleaved.before.serverCpuMsPerRequest, 1)} -> ${fixed(interleaved.after.serverCpuMsPerRequest, 1)} ms)`,
  );
  console.log("");
  console.log(formatTable(["target", "wanted", "measured", ""], outcome.targets.map((t) => [t.name, t.target, t.actual, verdict(t.pass)])));
  console.log("");
  console.log(`load avg at end: ${os.loadavg().map((n) => n.toFixed(2)).join(" ")} on ${os.cpus().length} CPUs; history seeded OLDER than the active versions (cards unchanged)`);
  console.log(`database: ${database.description}`);
  console.log(
    "caveat: the client, the server and Chromium share the CPUs; 'others CPU' is the machine share other processes took meanwhile" +
      (database.dialect === "postgresql" ? " (PostgreSQL's background processes included; its backends for this run are 'db CPU')" : ""),
  );
  for (const note of findings.notes) console.log(`note: ${note}`);
  if (findings.problems.length) {
    console.log(`\n!!! ${findings.problems.length} problem(s): these figures are NOT a clean measurement.`);
    for (const problem of findings.problems) console.log(`!!!   ${problem}`);
  }
}

function sequenceJson(phase: SequencePhase) {
  return {
    path: phase.result.path,
    requests: phase.result.requests,
    warmups: phase.warmups,
    errors: phase.errors,
    errors_by_status: phase.result.errors,
    error_samples: phase.result.errorSamples,
    latency_ms: {
      p50: phase.p50,
      p95: phase.p95,
      max: phase.result.latencies.at(-1) ?? null,
      all: Array.from(phase.result.latencies),
    },
    ttfb_ms_p50: phase.ttfbP50,
    bytes: phase.result.bytes,
    server_cpu_ms_per_request: phase.serverCpuMsPerRequest,
    database_cpu_ms_per_request: Number.isFinite(phase.databaseCpuMsPerRequest) ? phase.databaseCpuMsPerRequest : null,
    other_processes_cpu_share: phase.othersCpuShare,
  };
}

function serverRunJson(run: ServerRun) {
  return {
    server_pid: run.pid,
    board_api: { ...sequenceJson(run.api), cards: run.api.total, columns: run.api.columns, gzip_bytes: run.api.gzipBytes },
    render_root: {
      ...sequenceJson(run.render),
      columns_in_html: run.render.columnsInHtml,
      cards_in_html: run.render.cardsInHtml,
      streamed_suspense_boundaries: run.render.streamedBoundaries,
    },
    browser: run.browser
      ? { viewport: VIEWPORT, settle_ms: SETTLE_AFTER_LOAD_MS, median: run.browser.median, lcp_element: run.browser.lcpElement, runs: run.browser.runs }
      : null,
    rss_mib: run.memory?.rss ?? null,
    peak_rss_mib: run.memory?.peak ?? null,
  };
}

function resultsJson(outcome: Outcome, settings: Settings, findings: Findings, loadBefore: number[], database: BenchDatabase) {
  return {
    finished_at: new Date().toISOString(),
    revision: gitRevision(),
    settings: { ...settings, seed_chunk: SEED_CHUNK, api_warmups: API_WARMUPS, render_warmups: RENDER_WARMUPS, pages_signed_in_as: PERSON_ROLE },
    machine: { cpus: os.cpus().length, node: process.version, load_avg_before: loadBefore, load_avg_after: os.loadavg() },
    database: { dialect: database.dialect, what: database.description },
    seeded: {
      thread_kinds: Object.fromEntries(THREAD_KINDS.map((kind) => [kind, KIND_COLUMN[kind]])),
      history: "older than the active versions: every card and column stays the same",
      expected_columns: expectedColumnCounts(settings.threads),
      phases: outcome.seeds.map(({ name, summary, stats }) => ({ name, ...summary, rows: stats.rows, active_threads: stats.activeThreads, database_bytes: stats.bytes })),
    },
    before_history: serverRunJson(outcome.before),
    after_history: serverRunJson(outcome.after),
    history_ratio_api_p50: outcome.ratio,
    history_ratio_api_server_cpu: outcome.cpuRatio,
    interleaved: {
      what: "a copy of the database taken before the history (its own server on port+1) and the server after it, request by request in turn",
      before: sequenceJson(outcome.interleaved.before),
      after: sequenceJson(outcome.interleaved.after),
      ratio_p50: outcome.interleaved.ratio,
      ratio_server_cpu: outcome.interleaved.cpuRatio,
    },
    targets: Object.fromEntries(outcome.targets.map((t) => [t.name, { target: t.target, actual: t.actual, pass: t.pass }])),
    problems: findings.problems,
    notes: findings.notes,
    clean: findings.problems.length === 0,
  };
}

/** Other processes' CPU use makes wall-clock figures noisy, and the before/after comparison unfair when it differs. */
function noteNoise(phases: SequencePhase[], findings: Findings): void {
  const busy = phases.filter((phase) => phase.othersCpuShare > NOISY_OTHERS_SHARE);
  if (busy.length) {
    findings.notes.push(
      `other processes used much of the machine during ${busy.map((phase) => `${phase.name} (${fixed(phase.othersCpuShare * 100, 0)}%)`).join(", ")}: wall-clock figures there are inflated`,
    );
  }
  const [beforeApi, , afterApi] = phases;
  if (beforeApi && afterApi && Math.abs(beforeApi.othersCpuShare - afterApi.othersCpuShare) > NOISY_OTHERS_SHARE) {
    findings.notes.push("the board API before and after the history ran under different background load: the interleaved ratio is the fair one");
  }
}

/** Summarises this run's server profiles; node names them CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile. */
function printProfiles(dir: string, sinceMs: number, labels: Map<number, string>): void {
  for (const file of profilesIn(dir, sinceMs)) {
    const pid = Number(path.basename(file).split(".")[3]);
    const summary = summariseProfile(file, 12);
    console.log(
      `\nserver CPU profile, ${labels.get(pid) ?? `pid ${pid}`}: ${path.basename(file)}, busy ${(summary.busyMs / 1000).toFixed(1)} s of ${(summary.totalMs / 1000).toFixed(1)} s`,
    );
    console.log(formatTable(["self time by area", "ms", "share"], summary.areas.map((a) => [a.name, fixed(a.ms, 0), `${fixed((a.ms / summary.busyMs) * 100, 1)}%`])));
    console.log(formatTable(["self time by function", "ms", "share"], summary.functions.map((f) => [f.name, fixed(f.ms, 0), `${fixed((f.ms / summary.busyMs) * 100, 1)}%`])));
  }
}

/**
 * A copy of the database as it is now, for the interleaved comparison: a file beside
 * it (removed with its temp folder), or on PostgreSQL a database made from it as a
 * template (<name>_before, dropped like it). Nothing may have the database open.
 */
async function copyOf(database: BenchDatabase): Promise<BenchDatabase> {
  if (database.postgresql) {
    const { serverUrl, own } = database.postgresql;
    const copy: OwnDatabase = await createOwnDatabase(serverUrl, `${own.name}_before`, own.name);
    return { ...database, url: copy.url, postgresql: { serverUrl, own: copy }, description: `PostgreSQL database ${copy.name}, a copy of ${own.name}` };
  }
  if (!database.sqliteFile || !database.tempDir) throw new Error("the board benchmark runs on a SQLite file of its own");
  const file = path.join(database.tempDir, "before-history.db");
  copyFileSync(database.sqliteFile, file);
  if (existsSync(`${database.sqliteFile}-wal`)) copyFileSync(`${database.sqliteFile}-wal`, `${file}-wal`);
  // Removed with the original's temp folder.
  return { ...database, url: `file:${file}`, sqliteFile: file, tempDir: null, description: `SQLite copy ${file}` };
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const settings = settingsFromEnv();
  const runId = randomBytes(6).toString("hex");
  const loadBefore = os.loadavg();
  const startedAt = Date.now();
  const aborter = new AbortController();
  // Ctrl-C stops early; the finally blocks still stop the server and browser and clean up.
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => aborter.abort());
  const signal = aborter.signal;
  const findings: Findings = { problems: [], notes: [] };

  const restored = buildIfStale();
  if (restored.length) console.log(`bench: put back ${restored.join(", ")} as before the build (next build points them at ${DIST_DIR})`);
  const database = await chooseDatabase(runId, false);
  let snapshot: BenchDatabase | null = null;
  const profileLabels = new Map<number, string>();
  try {
    const migration = migrate(database.url);
    const token = createToken(database.url, `bench-board-${runId}`, "packets:read");
    const person: BenchPerson = { username: `bench-${runId}`, password: randomBytes(24).toString("base64url"), role: PERSON_ROLE };
    createPerson(database.url, person);
    console.log(
      `bench: ${settings.threads} threads x ${settings.versions} versions, then x${settings.historyFactor} history; ${database.description} (${migration}); ` +
        `load avg at start ${loadBefore.map((n) => n.toFixed(2)).join(" ")} on ${os.cpus().length} CPUs`,
    );
    const plan: BoardPlan = { runId, threads: settings.threads, versions: settings.versions, nowMs: startedAt };
    const seeds: SeedPhase[] = [];
    seeds.push(await seedPhase("active", plan, 0, settings.versions, database, signal, findings));
    // A copy as it is before the history, for the interleaved comparison at the end (taken while nothing has it open).
    snapshot = await copyOf(database);
    const before = await measureServer("before history", settings, database, token, person, true, signal, findings);
    profileLabels.set(before.pid, "before the history (board API, render of /, browser)");
    seeds.push(
      await seedPhase("older history", plan, settings.versions, settings.versions * settings.historyFactor, database, signal, findings),
    );
    const pair: { value?: Interleaved } = {};
    const copy = snapshot;
    const after = await measureServer(`after x${settings.historyFactor} history`, settings, database, token, person, false, signal, findings, async (server) => {
      pair.value = await compareInterleaved(settings, copy, server, database, token, signal, findings);
    });
    const interleaved = pair.value;
    if (!interleaved) throw new Error("the interleaved comparison did not run");
    profileLabels.set(after.pid, "after the history (board API, render of /, interleaved board API)");
    profileLabels.set(interleaved.pid, "copy before the history (interleaved board API)");

    const ratio = after.api.p50 / before.api.p50;
    const cpuRatio = after.api.serverCpuMsPerRequest / before.api.serverCpuMsPerRequest;
    noteNoise([before.api, before.render, after.api, after.render], findings);
    const outcome: Outcome = { seeds, before, after, ratio, cpuRatio, interleaved, targets: targetsFor(before, interleaved) };
    printReport(outcome, findings, database);
    writeJson(RESULTS_FILE, resultsJson(outcome, settings, findings, loadBefore, database));
    console.log(`results: ${path.relative(ROOT, RESULTS_FILE)}`);
    return findings.problems.length ? 2 : 0;
  } finally {
    if (snapshot) await cleanUpDatabase(snapshot);
    await cleanUpDatabase(database);
    if (settings.cpuProfileDir) {
      printProfiles(settings.cpuProfileDir, startedAt, profileLabels);
      console.log(`bench: server CPU profiles written to ${settings.cpuProfileDir}`);
    }
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
