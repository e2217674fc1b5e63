import "server-only";
import { readdir } from "node:fs/promises";
import { readRegularFile } from "../server/fs/read-regular-file";
import { PACKET_MAX_BYTES } from "../contract/schema";
import path from "node:path";
import { preparePacket } from "../contract/prepare";
import { compare } from "./git";
import { WORKBENCH_PATHS } from "./schemas";
import { jsonText, writeIfChanged } from "./write-if-changed";

/** A packet already on disk under outputs/handoff/<session_id>/handoff.json. */
export interface EarlierPacket {
  sessionDir: string;
  file: string;
  received: Record<string, unknown>;
  threadKey: string;
  createdAtMs: number | null;
}

export const HANDOFF_FILE = "handoff.json";

/** Every readable packet under outputs/handoff/, by folder name; files that are not packets are left alone. */
export async function readEarlierPackets(root: string): Promise<{ packets: EarlierPacket[]; skipped: string[] }> {
  const dir = path.join(root, WORKBENCH_PATHS.handoffDir);
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const packets: EarlierPacket[] = [];
  const skipped: string[] = [];
  for (const entry of entries.filter((item) => item.isDirectory()).sort((a, b) => compare(a.name, b.name))) {
    const file = path.join(dir, entry.name, HANDOFF_FILE);
    const reading = await readRegularFile(file, { maxBytes: PACKET_MAX_BYTES, linksWithin: path.dirname(file) }).catch(() => null);
    if (reading?.kind !== "ok") {
      if (reading && reading.kind !== "missing") skipped.push(`${WORKBENCH_PATHS.handoffDir}/${entry.name}/${HANDOFF_FILE}`);
      continue;
    }
    const text = reading.bytes.toString("utf8");
    try {
      const received = JSON.parse(text) as Record<string, unknown>;
      // Only the thread key and created_at are used; the time given affects lint flags alone.
      const prepared = preparePacket(received, 0);
      packets.push({ sessionDir: entry.name, file, received, threadKey: prepared.threadKey, createdAtMs: prepared.createdAtMs });
    } catch {
      skipped.push(`${WORKBENCH_PATHS.handoffDir}/${entry.name}/${HANDOFF_FILE}`);
    }
  }
  return { packets, skipped };
}

/**
 * The packet this session follows: the newest of its thread strictly older than
 * `createdAtMs`. Strictly, so that a rerun on the same inputs never reads its own
 * earlier output (that is what keeps two runs byte-identical).
 */
export function previousPacket(packets: EarlierPacket[], threadKey: string, createdAtMs: number | null): EarlierPacket | null {
  if (createdAtMs === null) return null;
  const older = packets.filter((packet) => packet.threadKey === threadKey && packet.createdAtMs !== null && packet.createdAtMs < createdAtMs);
  older.sort((a, b) => a.createdAtMs! - b.createdAtMs! || compare(a.sessionDir, b.sessionDir));
  return older.at(-1) ?? null;
}

const SETTLED = new Set(["superseded", "archived"]);

/**
 * One active handoff per thread on disk too: earlier packets of the thread get
 * `status: "superseded"`. The rest of each file is kept as it was parsed, keys
 * in their order, re-serialised as 2-space JSON (as the write-back does, decision 015).
 * A packet newer than this one is left active.
 */
export async function supersedeEarlier(
  packets: EarlierPacket[],
  threadKey: string,
  own: { sessionId: string; createdAtMs: number | null },
): Promise<string[]> {
  const superseded: string[] = [];
  for (const packet of packets) {
    if (packet.threadKey !== threadKey || packet.sessionDir === own.sessionId) continue;
    if (SETTLED.has(String(packet.received.status ?? "").trim().toLowerCase())) continue;
    if (packet.createdAtMs !== null && own.createdAtMs !== null && packet.createdAtMs > own.createdAtMs) continue;
    await writeIfChanged(packet.file, jsonText({ ...packet.received, status: "superseded" }));
    superseded.push(packet.file);
  }
  return superseded;
}
