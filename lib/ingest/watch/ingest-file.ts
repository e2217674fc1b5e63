import "server-only";
import path from "node:path";
import { BatonError } from "../../core/errors";
import { readRegularFile } from "../../server/fs/read-regular-file";
import { sha256Hex } from "../../contract/canonical-json";
import { PACKET_MAX_BYTES } from "../../contract/schema";
import { ingestPacket, readPacketText, type IngestResult } from "../ingest";
import { handoffFileKind } from "./handoff-files";
import { recordLedgerEvents } from "../../events/ledger";
import { workspaceRootOf } from "./workspace-root";

export interface FileIngestOptions {
  /** How long an unparsable file must keep the same bytes before it counts as invalid. */
  settleMs?: number;
  /** How often an unparsable file is re-read meanwhile. */
  pollMs?: number;
  /** Give up waiting for a file that keeps changing after this long. */
  maxWaitMs?: number;
}

export type FileIngestOutcome =
  | { kind: "ingested"; result: IngestResult }
  | { kind: "invalid"; error: BatonError }
  | { kind: "gone" };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The file's bytes, null when it is gone, or a BatonError for a file Baton will not
 * read (a FIFO, a device, a symlink, more than a packet's limit): agent files are
 * hostile input, never read past the limit (lib/server/fs/read-regular-file.ts).
 */
async function readIfPresent(file: string): Promise<Buffer | BatonError | null> {
  // A linked handoff.json is read only when it leads to a file in its own folder (as write-back writes).
  const reading = await readRegularFile(file, { maxBytes: PACKET_MAX_BYTES, linksWithin: path.dirname(file) });
  switch (reading.kind) {
    case "ok":
      return reading.bytes;
    case "missing":
      return null;
    case "refused":
      return new BatonError("unreadable_file", `The file was not read: ${reading.reason}.`);
    case "too_large":
      return new BatonError("payload_too_large", `A packet may be at most ${PACKET_MAX_BYTES} bytes; this file is larger (${reading.size} bytes or more).`, {
        limit_bytes: PACKET_MAX_BYTES,
      });
  }
}

function parseFile(file: string, bytes: Buffer): unknown {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new BatonError("invalid_encoding", "The file is not valid UTF-8.");
  }
  return readPacketText(text, handoffFileKind(file) === "markdown" ? "markdown" : "json");
}

// One invalid content of one file is reported once, not at every change event.
const reported = new Map<string, string>();

/**
 * Ingests one handoff file (handoff.json or a Markdown handoff) through the one ingest path. A file that does not
 * parse may be half-written: it is re-read until its bytes stop changing, and
 * only a stable invalid file becomes an `ingest_error` ledger event.
 */
export async function ingestHandoffFile(file: string, options: FileIngestOptions = {}): Promise<FileIngestOutcome> {
  const settleMs = options.settleMs ?? 2000;
  const pollMs = options.pollMs ?? 200;
  const deadline = Date.now() + (options.maxWaitMs ?? 30_000);
  let previous: string | null = null;
  let unchangedSince = Date.now();
  let lastError: BatonError | null = null;
  for (;;) {
    const bytes = await readIfPresent(file);
    if (bytes === null) return { kind: "gone" };
    if (bytes instanceof BatonError) {
      lastError = bytes;
      break;
    }
    const digest = sha256Hex(bytes.toString("latin1"));
    try {
      const packet = parseFile(file, bytes);
      const result = await ingestPacket(packet, {
        kind: "file",
        actor: "watcher",
        sourcePath: file,
        workspaceRoot: workspaceRootOf(file),
      });
      reported.delete(file);
      return { kind: "ingested", result };
    } catch (error) {
      if (!(error instanceof BatonError) || error.status >= 500) throw error;
      lastError = error;
      const unparsable = error.code === "invalid_json" || error.code === "invalid_encoding" || error.code === "invalid_markdown";
      // A parsed body that is not a packet is final; an unparsable one may still be being written.
      if (!unparsable) break;
      if (digest !== previous) {
        previous = digest;
        unchangedSince = Date.now();
      } else if (Date.now() - unchangedSince >= settleMs || Date.now() >= deadline) {
        break;
      }
      await sleep(pollMs);
    }
  }
  const error = lastError!;
  const bytes = await readIfPresent(file);
  const key = bytes instanceof BatonError ? `${bytes.code}:${bytes.message}` : bytes ? sha256Hex(bytes.toString("latin1")) : "gone";
  if (reported.get(file) !== key) {
    reported.set(file, key);
    await recordLedgerEvents([
      {
        kind: "ingest_error",
        actor: "watcher",
        data: { source_path: file, code: error.code, message: error.message, details: error.details ?? null },
      },
    ]);
    console.warn(`baton: ${file} was not ingested: ${error.message}`);
  }
  return { kind: "invalid", error };
}
