import { BatonError } from "../errors";
import { parseJsonText } from "../packet/validate";
import { BATCH_MAX_BYTES, BATCH_MAX_PACKETS, PACKET_MAX_BYTES } from "../packet/schema";
import { toBatonError } from "../http/respond";
import { ingestPacket, type IngestResult, type IngestSource } from "./ingest";

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

function tooLarge(message: string, limit: number): BatonError {
  return new BatonError("payload_too_large", message, { limit_bytes: limit });
}

/**
 * One POST /api/v1/packets body: a packet (201 new, 200 duplicate) or a batch
 * `{"packets": [...]}` (207, one result per item, each stored on its own).
 */
export async function ingestRequestBody(
  text: string,
  bytes: number,
  source: IngestSource,
): Promise<{ status: number; body: unknown }> {
  const value = parseJsonText(text);
  if (!isBatch(value)) {
    if (bytes > PACKET_MAX_BYTES) {
      throw tooLarge(`A packet may be at most ${PACKET_MAX_BYTES} bytes; this one is ${bytes}.`, PACKET_MAX_BYTES);
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
    throw tooLarge(`A batch may hold at most ${BATCH_MAX_PACKETS} packets; this one holds ${packets.length}.`, BATCH_MAX_BYTES);
  }
  const results: BatchItem[] = [];
  for (const [index, packet] of packets.entries()) {
    try {
      const size = Buffer.byteLength(JSON.stringify(packet) ?? "");
      if (size > PACKET_MAX_BYTES) {
        throw tooLarge(`A packet may be at most ${PACKET_MAX_BYTES} bytes; item ${index} is ${size}.`, PACKET_MAX_BYTES);
      }
      // Idempotency keys name a whole request, not its items.
      const result = await ingestPacket(packet, { ...source, idempotency: undefined });
      results.push({ index, status: result.duplicate ? 200 : 201, ...result });
    } catch (error) {
      const batonError = toBatonError(error);
      if (batonError.status >= 500) throw batonError;
      results.push({ index, status: batonError.status, ...batonError.toBody() });
    }
  }
  return { status: 207, body: { results } };
}
