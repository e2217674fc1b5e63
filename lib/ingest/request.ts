import "server-only";
import { BatonError } from "../core/errors";
import { assertJsonDepth, parseJsonText } from "../contract/validate";
import { BATCH_MAX_BYTES, BATCH_MAX_PACKETS, JSON_MAX_DEPTH, PACKET_MAX_BYTES } from "../contract/schema";
import { toBatonError } from "../db/errors";
import { claimIdempotencyKey, ingestPacket, readPacketText, type IngestResult, type IngestSource, type PacketTextFormat } from "./ingest";

export { BATCH_MAX_BYTES };

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

function tooLarge(message: string, limit: { limit_bytes: number } | { limit_packets: number }): BatonError {
  return new BatonError("payload_too_large", message, limit);
}

/**
 * One POST /api/v1/packets body: a packet (201 new, 200 duplicate) or a batch
 * `{"packets": [...]}` (207, one result per item, each stored on its own); a Markdown
 * body is one packet.
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
    const result = await ingestPacket(readPacketText(text, "markdown"), source);
    return { status: result.duplicate ? 200 : 201, body: result };
  }
  // A batch wraps its packets two levels deep; each packet keeps the single-packet limit.
  const value = parseJsonText(text, JSON_MAX_DEPTH + 2);
  if (!isBatch(value)) {
    assertJsonDepth(text);
    if (bytes > PACKET_MAX_BYTES) {
      throw tooLarge(`A packet may be at most ${PACKET_MAX_BYTES} bytes; this one is ${bytes}.`, { limit_bytes: PACKET_MAX_BYTES });
    }
    const result = await ingestPacket(value, source);
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
    packets.map(async (packet, index) => {
      const size = Buffer.byteLength(JSON.stringify(packet) ?? "");
      if (size > PACKET_MAX_BYTES) {
        throw tooLarge(`A packet may be at most ${PACKET_MAX_BYTES} bytes; item ${index} is ${size}.`, { limit_bytes: PACKET_MAX_BYTES });
      }
      // Idempotency keys name a whole request, not its items.
      return ingestPacket(packet, { ...source, idempotency: undefined });
    }),
  );
  const results: BatchItem[] = outcomes.map((outcome, index) => {
    if (outcome.status === "fulfilled") return { index, status: outcome.value.duplicate ? 200 : 201, ...outcome.value };
    const batonError = toBatonError(outcome.reason);
    if (batonError.status >= 500) throw batonError;
    return { index, status: batonError.status, ...batonError.toBody() };
  });
  return { status: 207, body: { results } };
}
