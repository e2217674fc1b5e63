/**
 * The one-at-a-time phase of bench:viewers: for a number of viewers and a mode, packets are
 * ingested one after another, each once every viewer's board shows the previous one's
 * next_action (or the wait ran out), and the server's CPU per event is measured.
 */
import { performance } from "node:perf_hooks";
import { fixed, formatTable } from "./report";
import { percentile } from "./sustained";
import type { AskViewers } from "./viewer-server";
import type { FromViewers, ViewerMode } from "./viewer-clients";
import { ingestPacket } from "../../lib/ingest/ingest";
import { boardDeltasComputed } from "../../lib/board/board-delta";

export interface OneAtATimeRow {
  viewers: number;
  mode: ViewerMode;
  cpuPerEvent: number;
  latencies: number[];
  never: number;
  bytesPerViewer: number;
  computed: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const cpuMs = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

export async function measureOneAtATime(
  ask: AskViewers,
  viewers: number,
  mode: ViewerMode,
  keys: string[],
  packets: number,
  serial: { next: number },
  neverAfterMs: number,
): Promise<OneAtATimeRow> {
  const send = async (record: boolean) => {
    const key = keys[(serial.next * 7919) % keys.length]!;
    const nextAction = `bench next action ${serial.next++}`;
    await ask({ type: "expect", key, nextAction });
    await ingestPacket({ thread: key, summary: "bench:viewers packet", next_action: nextAction }, { kind: "cli", actor: "bench" });
    const posted = performance.timeOrigin + performance.now();
    const deadline = Date.now() + neverAfterMs;
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

export function oneAtATimeTable(rows: OneAtATimeRow[]): string {
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
  return formatTable(
    ["viewers", "mode", "server CPU ms/event", "vs refetch", "201 to every board ms p50 / p95 / max", "never", "KB/viewer/event", "vs refetch", "deltas computed/event"],
    table,
  );
}
