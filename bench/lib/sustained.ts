/**
 * The sustained phase of bench:viewers (server side): for each row, opens the viewers, has
 * their process send packets and heartbeats open-loop for a while (./sustained-load.ts) and
 * measures this process (the server) meanwhile: CPU in cores (on PostgreSQL plus the run's
 * database backends), RSS; then prints the rows and the issue's targets.
 */
import { performance } from "node:perf_hooks";
import { databaseCpu } from "./stats";
import { cpuMs as processCpuMs, machineBusyMs, type BenchDatabase } from "./server";
import { fixed, formatTable, verdict } from "./report";
import type { AskViewers } from "./viewer-server";
import type { FromViewers, ViewerMode } from "./viewer-clients";
import { heartbeatRequest, type LoadResult } from "./sustained-load";
import type { ServerUnderTest } from "./viewer-target";
import { HEARTBEAT_LEDGER_INTERVAL_MS } from "../../lib/board/watchdog/session-events";

export interface SustainedRowPlan {
  mode: ViewerMode;
  viewers: number;
  /** Chromium pages besides the HTTP viewers (production servers only). */
  browsers: number;
  seconds: number;
  /** Why this row differs from the main one, for the output. */
  note: string;
}

export interface SustainedRow extends SustainedRowPlan {
  packetsPerSecond: number;
  heartbeatsPerSecond: number;
  /** The server processes' CPU over the sending window, in cores. */
  serverCores: number;
  /** The run's PostgreSQL backends' CPU over the same window, in cores (null on SQLite: it runs in this process). */
  databaseCores: number | null;
  /** The viewers' and sender's process, in cores: it shares the machine with the server. */
  clientCores: number;
  /** Every other process on the machine, in cores (a shared machine starves the server). */
  otherCores: number;
  /** Highest RSS sampled during the window (all server processes together), MiB. */
  rssMiB: number;
  /** How long the server stayed busy after the viewers opened, before the load started (null: still busy after the wait's limit). */
  openingQuietMs: number | null;
  /** How long the running fleet's last heartbeats took to send before the viewers opened (null: BENCH_FLEET_RUNNING=0). */
  fleetRunningMs: number | null;
  /** The cards each Chromium viewer's board showed when it opened. */
  browserCards: number[];
  load: LoadResult;
}

export interface SustainedContext {
  ask: AskViewers;
  /** The viewers' process. */
  viewersPid: number;
  server: ServerUnderTest;
  viewerTokens: string[];
  /** The Chromium viewers' page (the board filtered to their threads) and those threads. */
  browserPath: string;
  browserKeys: string[];
  browserProject: string;
  browserEvery: number;
  packetToken: string;
  heartbeatToken: string;
  keys: string[];
  database: BenchDatabase;
  packetsPerSecond: number;
  heartbeatsPerSecond: number;
  neverAfterMs: number;
  serial: { next: number };
  /** Whether each row starts from a fleet already running (fleetAlreadyRunning); false restores the cold start. */
  fleetRunning: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

/** Waits until work still under way (refetches past the wait) is done: the next row starts on an idle server. */
export async function settleServer(server: ServerUnderTest): Promise<void> {
  while (server.openStreams() > 0) await sleep(20);
  await quietServer(server);
}

/** Requests in flight while the fleet's last heartbeats are sent. */
const FLEET_SENDERS = 8;

/**
 * Before a row: the fleet has been running. Each thread's last heartbeat is sent, its `at` spread
 * over the last minute, so that during the row each thread's heartbeat comes due for its
 * once-a-minute ledger event at its own time, about keys/60 a second, as in a fleet that has
 * been heartbeating. Without it every thread's first heartbeat of the row is recorded (its last
 * ledger event is a packet or a stale spell): up to 50 ledger events, card changes and deltas to
 * every board a second for the row's first 20 s, then only those after a packet for 40 s,
 * because the load's heartbeats reach each thread every 20 s in the same order. That is a fleet
 * coming back from silence all at once, not the issue's load (docs/performance.md, decision 100).
 * Sent before the viewers open, so their boards load the state it leaves. Returns the time it took.
 */
async function fleetAlreadyRunning(context: SustainedContext): Promise<number> {
  const { server, keys, heartbeatToken } = context;
  const started = performance.now();
  const now = Date.now();
  let next = 0;
  const sendOne = async (index: number) => {
    const key = keys[index]!;
    const at = new Date(now - HEARTBEAT_LEDGER_INTERVAL_MS + (HEARTBEAT_LEDGER_INTERVAL_MS * (index + 1)) / keys.length).toISOString();
    const { path, body } = heartbeatRequest(key, `bench-${index}`, at);
    const response = await fetch(`${server.bases[index % server.bases.length]}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${heartbeatToken}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (response.status !== 200) throw new Error(`the fleet's last heartbeat for ${key}: HTTP ${response.status}: ${(await response.text()).slice(0, 200)}`);
    await response.arrayBuffer().catch(() => undefined);
  };
  const sender = async () => {
    for (let index = next++; index < keys.length; index = next++) await sendOne(index);
  };
  await Promise.all(Array.from({ length: FLEET_SENDERS }, sender));
  return performance.now() - started;
}

/** How long the viewers' opening may keep the server busy before the load starts anyway. */
const OPENING_QUIET_MAX_MS = 30_000;

/**
 * Until the server has been under 10% of a core for half a second: the work the viewers'
 * opening set off (the Chromium pages' rendering and first requests) is done. Returns the time
 * waited, or null when it was still busy after `maxMs`.
 */
async function quietServer(server: ServerUnderTest, maxMs = Infinity): Promise<number | null> {
  const started = performance.now();
  for (;;) {
    const before = server.cpuMs();
    await sleep(500);
    if (server.cpuMs() - before < 50) return performance.now() - started;
    if (performance.now() - started > maxMs) return null;
  }
}

/** Viewer i watches instance i mod n: the viewers are split between the instances. */
export const viewersOn = (server: ServerUnderTest, tokens: string[]) => tokens.map((token, i) => ({ base: server.bases[i % server.bases.length]!, token }));

export async function runSustainedRow(context: SustainedContext, plan: SustainedRowPlan): Promise<SustainedRow> {
  const { ask, server } = context;
  const fleetMs = context.fleetRunning ? await fleetAlreadyRunning(context) : null;
  if (fleetMs !== null) await quietServer(server, OPENING_QUIET_MAX_MS);
  const cookie = plan.browsers ? await server.session() : null;
  const browsers = cookie ? Array.from({ length: plan.browsers }, (_, i) => ({ url: `${server.bases[i % server.bases.length]}${context.browserPath}`, cookie })) : [];
  const opened = await ask({ type: "open", viewers: viewersOn(server, context.viewerTokens.slice(0, plan.viewers)), mode: plan.mode, browsers, browserKeys: context.browserKeys });
  const browserCards = (opened.type === "done" && opened.browserCards) || [];
  // The load is what a fleet sends while boards are open; opening every board in the same
  // second is another event (its figures are not this row's): it finishes first.
  const openingMs = await quietServer(server, OPENING_QUIET_MAX_MS);
  const firstSerial = context.serial.next;
  context.serial.next += Math.round(context.packetsPerSecond * plan.seconds);
  const database = await databaseCpu(context.database);
  let rss = server.rssBytes();
  const sampler = setInterval(() => (rss = Math.max(rss, server.rssBytes())), 500);
  const cpuBefore = server.cpuMs();
  const clientBefore = processCpuMs(context.viewersPid);
  const machineBefore = machineBusyMs();
  const started = performance.now();
  const answer = ask({
    type: "load",
    bases: server.bases,
    browserKeys: browsers.length ? context.browserKeys : [],
    browserProject: context.browserProject,
    browserEvery: context.browserEvery,
    packetToken: context.packetToken,
    heartbeatToken: context.heartbeatToken,
    keys: context.keys,
    packetsPerSecond: context.packetsPerSecond,
    heartbeatsPerSecond: context.heartbeatsPerSecond,
    seconds: plan.seconds,
    firstSerial,
    neverAfterMs: context.neverAfterMs,
  });
  await sleep(plan.seconds * 1000);
  const window = performance.now() - started;
  const serverCores = (server.cpuMs() - cpuBefore) / window;
  const clientCores = (processCpuMs(context.viewersPid) - clientBefore) / window;
  const machineCores = (machineBusyMs() - machineBefore) / window;
  const databaseCores = database ? (await database.since()) / window : null;
  const otherCores = Math.max(0, machineCores - serverCores - (databaseCores ?? 0) - clientCores);
  clearInterval(sampler);
  const load = (await answer) as Extract<FromViewers, { type: "loaded" }>;
  await ask({ type: "close" });
  await settleServer(server);
  const row: SustainedRow = { ...plan, browserCards, packetsPerSecond: context.packetsPerSecond, heartbeatsPerSecond: context.heartbeatsPerSecond, serverCores, databaseCores, clientCores, otherCores, rssMiB: rss / 2 ** 20, openingQuietMs: openingMs, fleetRunningMs: fleetMs, load };
  const opening = openingMs === null ? `server still busy ${OPENING_QUIET_MAX_MS / 1000} s after the viewers opened` : `server quiet ${fixed(openingMs / 1000, 1)} s after the viewers opened`;
  const fleet = fleetMs === null ? "cold fleet" : `fleet's last heartbeats sent in ${fixed(fleetMs / 1000, 1)} s`;
  console.log(
    `bench: sustained ${plan.viewers} viewers, ${plan.mode}, ${plan.seconds} s (${fleet}; ${opening}): ${fixed(totalCores(row), 2)} cores, ${load.packets} packets, ${load.heartbeats} heartbeats (${load.recordedHeartbeats} recorded in the ledger)`,
  );
  return row;
}

export const totalCores = (row: SustainedRow) => row.serverCores + (row.databaseCores ?? 0);
/** Bytes each viewer received per event (a packet or a heartbeat sent) while the load was sent. */
export const bytesPerViewerEvent = (row: SustainedRow): number => row.load.bytes / Math.max(1, row.viewers) / Math.max(1, row.load.packets + row.load.heartbeats);

export function sustainedTable(rows: SustainedRow[]): string {
  return formatTable(
    ["mode", "viewers", "s", "sent pkt + hb", "errors", "CPU cores (db)", "ingest ms p50 / p99", "heartbeat ms p50 / p99", "201 to every board ms p50 / p95 / max", "never", "sent to every board ms p50 / p95", "KB/viewer/event", "RSS MiB", "sender lag ms", "viewers+sender cores", "other processes cores", "Chromium DOM ms p50 / p95 / max, never"],
    rows.map((row) => {
      const { load } = row;
      const pairs = load.latencies.length + load.never;
      return [
        row.mode + (row.note ? ` (${row.note})` : ""),
        `${row.viewers}${row.browsers ? ` + ${row.browsers} Chromium` : ""}`,
        String(row.seconds),
        `${load.packets} + ${load.heartbeats}`,
        String(load.packetErrors + load.heartbeatErrors),
        `${fixed(totalCores(row), 2)}${row.databaseCores === null ? "" : ` (${fixed(row.databaseCores, 2)})`}`,
        `${fixed(percentile(load.ingestMs, 50), 0)} / ${fixed(percentile(load.ingestMs, 99), 0)}`,
        `${fixed(percentile(load.heartbeatMs, 50), 0)} / ${fixed(percentile(load.heartbeatMs, 99), 0)}`,
        `${fixed(percentile(load.latencies, 50), 0)} / ${fixed(percentile(load.latencies, 95), 0)} / ${fixed(load.latencies.at(-1) ?? NaN, 0)}`,
        `${load.never} of ${pairs}`,
        `${fixed(percentile(load.fromSend, 50), 0)} / ${fixed(percentile(load.fromSend, 95), 0)}`,
        fixed(bytesPerViewerEvent(row) / 1024, 2),
        fixed(row.rssMiB, 0),
        fixed(load.maxLagMs, 0),
        fixed(row.clientCores, 2),
        fixed(row.otherCores, 2),
        row.browsers
          ? `${fixed(percentile(load.browserLatencies, 50), 0)} / ${fixed(percentile(load.browserLatencies, 95), 0)} / ${fixed(load.browserLatencies.at(-1) ?? NaN, 0)}, ${load.browserNever} of ${load.browserLatencies.length + load.browserNever}`
          : "-",
      ];
    }),
  );
}

export interface TargetCheck {
  name: string;
  target: string;
  actual: string;
  pass: boolean;
}

/** The issue's targets for the live board, checked on the main delta row. */
export function targetChecks(row: SustainedRow): TargetCheck[] {
  const { load } = row;
  return [
    { name: "server CPU", target: "< 1 core", actual: `${fixed(totalCores(row), 2)} cores`, pass: totalCores(row) < 1 },
    { name: "201 to every board p95", target: "<= 1000 ms", actual: `${fixed(percentile(load.latencies, 95), 0)} ms`, pass: percentile(load.latencies, 95) <= 1000 },
    { name: "next actions never shown", target: "0", actual: String(load.never), pass: load.never === 0 && load.latencies.length > 0 },
    { name: "ingest p99", target: "< 200 ms", actual: `${fixed(percentile(load.ingestMs, 99), 0)} ms`, pass: percentile(load.ingestMs, 99) < 200 },
    { name: "sent per viewer per event", target: "< 4 KB", actual: `${fixed(bytesPerViewerEvent(row) / 1024, 2)} KB`, pass: bytesPerViewerEvent(row) < 4096 },
    ...(row.browsers
      ? [{ name: "Chromium boards: every next action shown", target: "0 never", actual: `${load.browserNever} never of ${load.browserLatencies.length + load.browserNever}`, pass: load.browserNever === 0 && load.browserLatencies.length > 0 }]
      : []),
    { name: "requests failed", target: "0", actual: String(load.packetErrors + load.heartbeatErrors), pass: load.packetErrors + load.heartbeatErrors === 0 },
  ];
}

export function printTargets(checks: TargetCheck[]): void {
  for (const check of checks) console.log(`target ${check.name} ${check.target}: ${verdict(check.pass)} (${check.actual})`);
}
