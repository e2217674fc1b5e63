import "server-only";
import { BatonError } from "../core/errors";
import { assertJsonDepth, parseJsonText } from "../contract/validate";
import { BATCH_MAX_BYTES, BATCH_MAX_PACKETS, JSON_MAX_DEPTH, PACKET_MAX_BYTES } from "../contract/schema";
import { toBatonError } from "../db/errors";
import { isPacketEnvelope, parsePacketEnvelope, REPORTS_MAX_TOTAL_BYTES, type PacketEnvelope } from "../contract/attached-reports";
import { claimIdempotencyKey, ingestPacket, readPacketText, type IngestResult, type IngestSource, type PacketTextFormat } from "./ingest";

export { BATCH_MAX_BYTES };

/** Room for an envelope's own keys and the reports' refs beside the packet and the reports. */
const ENVELOPE_OVERHEAD_BYTES = 64 * 1024;

type BatchItem =
  | ({ index: number; status: 200 | 201 } & IngestResult)
  | { index: number; status: number; error: { code: string; message: string; details: unknown } };

function isBatch(value: unknown): value is { packets: unknown } {
  return (
    value !== null &&
    typeof value === "object" &&
    !Array.isArray(value) &&
    Object.keys(value).length === 1 &&
    Object.hasOwn(value, "packets")
  );
}

/** A packet, or an envelope of a packet and its verdict reports (lib/contract/attached-reports.ts). */
function unwrap(value: unknown, at: string): { packet: unknown; reports?: PacketEnvelope["reports"]; packetBytes: number } {
  if (!isPacketEnvelope(value)) return { packet: value, packetBytes: Buffer.byteLength(JSON.stringify(value) ?? "") };
  const envelope = parsePacketEnvelope(value);
  const packetBytes = Buffer.byteLength(JSON.stringify(envelope.packet));
  if (packetBytes > PACKET_MAX_BYTES) {
    throw tooLarge(`A packet may be at most ${PACKET_MAX_BYTES} bytes; ${at} is ${packetBytes}.`, { limit_bytes: PACKET_MAX_BYTES });
  }
  return { packet: envelope.packet, reports: envelope.reports, packetBytes };
}

/** What the caller is told: the watcher's own bookkeeping stays out of the answer. */
function answerOf(result: IngestResult): IngestResult {
  return { packet_id: result.packet_id, thread_key: result.thread_key, flags: result.flags, duplicate: result.duplicate, active: result.active };
}

function tooLarge(message: string, limit: { limit_bytes: number } | { limit_packets: number }): BatonError {
  return new BatonError("payload_too_large", message, limit);
}

/**
 * One POST /api/v1/packets body: a packet (201 new, 200 duplicate), a packet with its
 * verdict reports `{"packet": {...}, "reports": [...]}`, or a batch `{"packets": [...]}`
 * of either (207, one result per item, each stored on its own); a Markdown body is one packet.
 */
export async function ingestRequestBody(
  text: string,
  bytes: number,
  source: IngestSource,
  format: PacketTextFormat = "json",
): Promise<{ status: number; body: IngestResult | { results: BatchItem[] } }> {
  if (format === "markdown") {
    if (bytes > PACKET_MAX_BYTES) {
      throw tooLarge(`A packet may be at most ${PACKET_MAX_BYTES} bytes; this one is ${bytes}.`, { limit_bytes: PACKET_MAX_BYTES });
    }
    const result = answerOf(await ingestPacket(readPacketText(text, "markdown"), source));
    return { status: result.duplicate ? 200 : 201, body: result };
  }
  // A batch wraps its packets two levels deep; each packet keeps the single-packet limit.
  const value = parseJsonText(text, JSON_MAX_DEPTH + 2);
  if (isPacketEnvelope(value)) {
    if (bytes > PACKET_MAX_BYTES + REPORTS_MAX_TOTAL_BYTES + ENVELOPE_OVERHEAD_BYTES) {
      throw tooLarge(`A packet with its reports may be at most ${PACKET_MAX_BYTES + REPORTS_MAX_TOTAL_BYTES + ENVELOPE_OVERHEAD_BYTES} bytes; this one is ${bytes}.`, {
        limit_bytes: PACKET_MAX_BYTES + REPORTS_MAX_TOTAL_BYTES + ENVELOPE_OVERHEAD_BYTES,
      });
    }
    const { packet, reports } = unwrap(value, "the packet");
    const result = answerOf(await ingestPacket(packet, { ...source, reports }));
    return { status: result.duplicate ? 200 : 201, body: result };
  }
  if (!isBatch(value)) {
    assertJsonDepth(text);
    if (bytes > PACKET_MAX_BYTES) {
      throw tooLarge(`A packet may be at most ${PACKET_MAX_BYTES} bytes; this one is ${bytes}.`, { limit_bytes: PACKET_MAX_BYTES });
    }
    const result = answerOf(await ingestPacket(value, source));
    return { status: result.duplicate ? 200 : 201, body: result };
  }
  const packets = value.packets;
  if (!Array.isArray(packets)) {
    throw new BatonError("invalid_request", 'A batch is {"packets": [...]}: packets must be an array of packets.', {
      field: "packets",
    });
  }
  if (packets.length > BATCH_MAX_PACKETS) {
    throw tooLarge(`A batch may hold at most ${BATCH_MAX_PACKETS} packets; this one holds ${packets.length}.`, {
      limit_packets: BATCH_MAX_PACKETS,
    });
  }
  // The key names the whole batch: the same key with another batch is refused before anything is stored.
  if (source.idempotency) await claimIdempotencyKey(source.idempotency, value);
  // Submitted together, in order: the writer stores them in one commit as if one after another.
  const outcomes = await Promise.allSettled(
    packets.map(async (item, index) => {
      const { packet, reports, packetBytes } = unwrap(item, `item ${index}`);
      if (packetBytes > PACKET_MAX_BYTES) {
        throw tooLarge(`A packet may be at most ${PACKET_MAX_BYTES} bytes; item ${index} is ${packetBytes}.`, { limit_bytes: PACKET_MAX_BYTES });
      }
      // Idempotency keys name a whole request, not its items.
      return ingestPacket(packet, { ...source, reports, idempotency: undefined });
    }),
  );
  const results: BatchItem[] = outcomes.map((outcome, index) => {
    if (outcome.status === "fulfilled") return { index, status: outcome.value.duplicate ? 200 : 201, ...answerOf(outcome.value) };
    const batonError = toBatonError(outcome.reason);
    if (batonError.status >= 500) throw batonError;
    return { index, status: batonError.status, ...batonError.toBody() };
  });
  return { status: 207, body: { results } };
}
