import "server-only";
import { canonicalJson, sha256Hex } from "../contract/canonical-json";
import { preparePacket } from "../contract/prepare";
import { prepareAttachedReports } from "../contract/attached-reports";
import { markdownToPacket } from "../contract/markdown";
import { parseJsonText } from "../contract/validate";
import { inSqlTransaction } from "../db/client";
import { insertRows } from "../db/sql";
import { BatonError } from "../core/errors";
import { submitForStorage } from "./batch-writer";
import { readIdempotencyRecord } from "./store-batch";
import { primeNewVersionVerdict } from "../views/verdict/version";
import type { IngestResult, IngestSource } from "./types";

export type { IngestResult, IngestSource, IngestSourceKind } from "./types";

export type PacketTextFormat = "json" | "markdown";

/**
 * A packet's text as the value ingestPacket takes, for every way in (HTTP, watched files):
 * JSON with its nesting limit, or a Markdown handoff read into a packet that keeps the text.
 */
export function readPacketText(text: string, format: PacketTextFormat): unknown {
  return format === "markdown" ? markdownToPacket(text) : parseJsonText(text);
}

/**
 * The one ingest path (HTTP, watched folders, CLI): validate, normalise, hash,
 * then store in a write transaction that dedupes by content, finds the thread,
 * supersedes by the contract's ordering and records ledger events.
 * Throws BatonError for bodies that are not packets; nothing is stored then.
 */
export async function ingestPacket(body: unknown, source: IngestSource, receivedAt = new Date()): Promise<IngestResult> {
  try {
    const packet = preparePacket(body, receivedAt.getTime(), source.project);
    const reports = prepareAttachedReports(source.reports ?? [], packet.canonical.verdict_pointer);
    const bodyHash = source.idempotency ? sha256Hex(canonicalJson(source.reports ? { packet: body, reports: source.reports } : body)) : "";
    const result = await submitForStorage({ packet, reports, source, receivedAt, bodyHash }, source.arrival);
    if (!result.duplicate) {
      primeNewVersionVerdict(result.packet_id, {
        project: packet.canonical.project ?? null,
        sourcePath: source.sourcePath ?? null,
        workspaceRoot: source.workspaceRoot ?? null,
        pointers: packet.canonical.verdict_pointer,
        inlineVerdict: packet.canonical.verdict,
        attached: reports,
      });
    }
    return result;
  } finally {
    source.arrival?.release();
  }
}

/**
 * Records an Idempotency-Key for a request that is not one packet (a batch):
 * refused when the key was used with another body; a repeat goes on, and its
 * packets answer as duplicates.
 */
export async function claimIdempotencyKey(idempotency: { tokenId: string; key: string }, body: unknown): Promise<void> {
  const bodyHash = sha256Hex(canonicalJson(body));
  await inSqlTransaction(async (sql) => {
    const record = await readIdempotencyRecord(sql, idempotency);
    if (record && record.bodyHash !== bodyHash) {
      throw new BatonError(
        "idempotency_key_reused",
        "This Idempotency-Key was already used with a different body; use a new key for new content.",
        { idempotency_key: idempotency.key },
      );
    }
    if (!record) {
      await insertRows(sql, "IdempotencyRecord", ["tokenId", "key", "bodyHash", "packetId", "createdAt"], [[idempotency.tokenId, idempotency.key, bodyHash, null, new Date()]]);
    }
  });
}
