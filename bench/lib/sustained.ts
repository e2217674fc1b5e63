/**
 * The sustained phase of bench:viewers (server side): for each row, opens the viewers, has
 * their process send packets and heartbeats open-loop for a while (./sustained-load.ts) and
 * measures this process (the server) meanwhile: CPU in cores (on PostgreSQL plus the run's
 * database backends), RSS; then prints the rows and the issue's targets.
 */
import { performance } from "node:perf_hooks";
import { databaseCpu } from "./stats";
import type { BenchDatabase } from "./server";
import { fixed, formatTable, verdict } from "./report";
import type { AskViewers } from "./viewer-server";
import type { FromViewers, ViewerMode } from "./viewer-clients";
import type { LoadResult } from "./sustained-load";
import { openStreamCount } from "../../lib/events/ledger-stream";

export interface SustainedRowPlan {
  mode: ViewerMode;
  viewers: number;
  seconds: number;
  /** Why this row differs from the main one, for the output. */
  note: string;
}

export interface SustainedRow extends SustainedRowPlan {
  packetsPerSecond: number;
  heartbeatsPerSecond: number;
  /** This process's CPU over the sending window, in cores. */
  serverCores: number;
  /** The run's PostgreSQL backends' CPU over the same window, in cores (null on SQLite: it runs in this process). */
  databaseCores: number | null;
  /** Highest RSS sampled during the window, MiB. */
  rssMiB: number;
  load: LoadResult;
}

export interface SustainedContext {
  ask: AskViewers;
  base: string;
  viewerTokens: string[];
  packetToken: string;
  heartbeatToken: string;
  keys: string[];
  database: BenchDatabase;
  packetsPerSecond: number;
  heartbeatsPerSecond: number;
  neverAfterMs: number;
  serial: { next: number };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const cpuMs = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};
export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

/** Waits until work still under way (refetches past the wait) is done: the next row starts on an idle server. */
export async function settleServer(): Promise<void> {
  while (openStreamCount() > 0) await sleep(20);
  for (;;) {
    const before = cpuMs();
    await sleep(500);
    if (cpuMs() - before < 50) return;
  }
}

export async function runSustainedRow(context: SustainedContext, plan: SustainedRowPlan): Promise<SustainedRow> {
  const { ask } = context;
  await ask({ type: "open", base: context.base, tokens: context.viewerTokens.slice(0, plan.viewers), mode: plan.mode });
  const firstSerial = context.serial.next;
  context.serial.next += Math.round(context.packetsPerSecond * plan.seconds);
  const database = await databaseCpu(context.database);
  let rss = process.memoryUsage().rss;
  const sampler = setInterval(() => (rss = Math.max(rss, process.memoryUsage().rss)), 500);
  const cpuBefore = cpuMs();
  const started = performance.now();
  const answer = ask({
    type: "load",
    base: context.base,
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
  const serverCores = (cpuMs() - cpuBefore) / window;
  const databaseCores = database ? (await database.since()) / window : null;
  clearInterval(sampler);
  const load = (await answer) as Extract<FromViewers, { type: "loaded" }>;
  await ask({ type: "close" });
  await settleServer();
  const row: SustainedRow = { ...plan, packetsPerSecond: context.packetsPerSecond, heartbeatsPerSecond: context.heartbeatsPerSecond, serverCores, databaseCores, rssMiB: rss / 2 ** 20, load };
  console.log(`bench: sustained ${plan.viewers} viewers, ${plan.mode}, ${plan.seconds} s: ${fixed(totalCores(row), 2)} cores, ${load.packets} packets, ${load.heartbeats} heartbeats`);
  return row;
}

export const totalCores = (row: SustainedRow) => row.serverCores + (row.databaseCores ?? 0);
/** Bytes each viewer received per event (a packet or a heartbeat sent) while the load was sent. */
export const bytesPerViewerEvent = (row: SustainedRow) => row.load.bytes / Math.max(1, row.viewers) / Math.max(1, row.load.packets + row.load.heartbeats);

export function sustainedTable(rows: SustainedRow[]): string {
  return formatTable(
    ["mode", "viewers", "s", "sent pkt + hb", "errors", "CPU cores (db)", "ingest ms p50 / p99", "heartbeat ms p50 / p99", "201 to every board ms p50 / p95 / max", "never", "KB/viewer/event", "RSS MiB", "sender lag ms"],
    rows.map((row) => {
      const { load } = row;
      const pairs = load.latencies.length + load.never;
      return [
        row.mode + (row.note ? ` (${row.note})` : ""),
        String(row.viewers),
        String(row.seconds),
        `${load.packets} + ${load.heartbeats}`,
        String(load.packetErrors + load.heartbeatErrors),
        `${fixed(totalCores(row), 2)}${row.databaseCores === null ? "" : ` (${fixed(row.databaseCores, 2)})`}`,
        `${fixed(percentile(load.ingestMs, 50), 0)} / ${fixed(percentile(load.ingestMs, 99), 0)}`,
        `${fixed(percentile(load.heartbeatMs, 50), 0)} / ${fixed(percentile(load.heartbeatMs, 99), 0)}`,
        `${fixed(percentile(load.latencies, 50), 0)} / ${fixed(percentile(load.latencies, 95), 0)} / ${fixed(load.latencies.at(-1) ?? NaN, 0)}`,
        `${load.never} of ${pairs}`,
        fixed(bytesPerViewerEvent(row) / 1024, 2),
        fixed(row.rssMiB, 0),
        fixed(load.maxLagMs, 0),
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
    { name: "requests failed", target: "0", actual: String(load.packetErrors + load.heartbeatErrors), pass: load.packetErrors + load.heartbeatErrors === 0 },
  ];
}

export function printTargets(checks: TargetCheck[]): void {
  for (const check of checks) console.log(`target ${check.name} ${check.target}: ${verdict(check.pass)} (${check.actual})`);
}
