import { describe, expect, it } from "vitest";
import { BATCH_MAX_BYTES, BATCH_MAX_PACKETS, JSON_MAX_DEPTH, PACKET_MAX_BYTES } from "../../lib/contract/schema";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { testsRunOnPostgresql } from "@/testing/postgresql";
import { recordFigure } from "@/testing/reliability";
import { createWriteToken, errorCodeOf, packetRequest, send, streamOf } from "@/testing/hardening/ingest-harness";
import { nestedPacket, packetOfSummaryLength } from "@/testing/hardening/packet-arbitraries";

/**
 * Limits (issue 8, item 2) on the real POST /api/v1/packets handler, in-process:
 * a body at a limit is taken, one byte more is 413, whatever Content-Length says
 * (right, missing, smaller than the body) and however the body arrives (one
 * buffer, a stream of many small chunks); nesting past 64 levels is refused.
 */

freshDatabaseForThisFile();

const SECTION = "limits";
const MiB = 1024 * 1024;

/** How the body reaches the handler. */
const DELIVERIES: { name: string; request: (token: string, bytes: Uint8Array) => Request }[] = [
  { name: "with a correct Content-Length", request: (token, bytes) => packetRequest(token, bytes, { "content-length": String(bytes.length) }) },
  { name: "with no Content-Length (a stream)", request: (token, bytes) => packetRequest(token, streamOf(bytes, 64 * 1024)) },
  { name: "with a false, smaller Content-Length", request: (token, bytes) => packetRequest(token, bytes, { "content-length": "100" }) },
  { name: "chunked (1 KiB chunks)", request: (token, bytes) => packetRequest(token, streamOf(bytes, 1024)) },
];

/** A single packet of exactly `size` bytes, as text (ASCII: one byte a character); `tag` keeps each one new. */
function packetText(size: number, tag: string): string {
  const wrapper = packetOfSummaryLength(0, "").length;
  const text = packetOfSummaryLength(size - wrapper, tag);
  expect(Buffer.byteLength(text)).toBe(size);
  return text;
}
const packetOfBytes = (size: number, tag: string): Uint8Array => Buffer.from(packetText(size, tag));

/** A batch of exactly `size` bytes whose every packet stays within the packet limit. */
function batchOfBytes(size: number, tag: string): Uint8Array {
  const count = Math.ceil(size / PACKET_MAX_BYTES) + 1;
  const overhead = '{"packets":[]}'.length + (count - 1);
  const each = Math.floor((size - overhead) / count);
  const sizes = Array.from({ length: count }, (_, i) => (i === count - 1 ? size - overhead - each * (count - 1) : each));
  const packets = sizes.map((itemSize, i) => packetText(itemSize, `${tag} item ${i} `));
  const body = Buffer.from(`{"packets":[${packets.join(",")}]}`);
  expect(body.length).toBe(size);
  return body;
}

/** One byte more, as whitespace JSON ignores, before the closing brace. */
const plusOneByte = (bytes: Uint8Array) => Buffer.concat([bytes.subarray(0, bytes.length - 1), Buffer.from(" }")]);

describe("body size limits on POST /api/v1/packets", () => {
  for (const delivery of DELIVERIES) {
    it(`takes a packet of exactly ${PACKET_MAX_BYTES} bytes and refuses one byte more, ${delivery.name}`, async () => {
      const token = await createWriteToken();
      const atLimit = packetOfBytes(PACKET_MAX_BYTES, `packet ${delivery.name} `);
      const taken = await send(delivery.request(token, atLimit));
      expect(taken.status, JSON.stringify(taken.json).slice(0, 300)).toBe(201);
      expect(taken.added.versions).toBe(1);

      const over = await send(delivery.request(token, plusOneByte(packetOfBytes(PACKET_MAX_BYTES, `over ${delivery.name} `))));
      expect([over.status, errorCodeOf(over.json)]).toEqual([413, "payload_too_large"]);
      expect(over.json).toMatchObject({ error: { details: { limit_bytes: PACKET_MAX_BYTES } } });
      expect(over.added).toEqual({ versions: 0, threads: 0, events: 0 });
    });

    // The body is read (and its limit applied) before any database is involved: on PostgreSQL an
    // 8 MiB batch is stored once, with a correct Content-Length, and every way is refused one byte over
    // (docs/decisions/080-suite-cpu.md). The SQLite pass stores it every way.
    const storesTheBatch = !testsRunOnPostgresql() || delivery === DELIVERIES[0];
    it(`${storesTheBatch ? `takes a batch of exactly ${BATCH_MAX_BYTES} bytes and refuses` : "refuses a batch"} one byte more, ${delivery.name}`, async () => {
      const token = await createWriteToken();
      if (storesTheBatch) {
        const atLimit = batchOfBytes(BATCH_MAX_BYTES, `batch ${delivery.name}`);
        const taken = await send(delivery.request(token, atLimit));
        expect(taken.status).toBe(207);
        const results = (taken.json as { results: { status: number }[] }).results;
        expect(results.map((item) => item.status)).toEqual(results.map(() => 201));
        expect(taken.added.versions).toBe(results.length);
      }

      const over = await send(delivery.request(token, plusOneByte(batchOfBytes(BATCH_MAX_BYTES, `over ${delivery.name}`))));
      expect([over.status, errorCodeOf(over.json)]).toEqual([413, "payload_too_large"]);
      expect(over.json).toMatchObject({ error: { details: { limit_bytes: BATCH_MAX_BYTES } } });
      expect(over.added).toEqual({ versions: 0, threads: 0, events: 0 });
    }, 90_000); // two 8 MiB batches through ingest: tens of seconds on a loaded 2-core machine
  }

  it("stops reading a 50 MiB attempt at the limit: memory held is bounded by the limit, not the body", async () => {
    const token = await createWriteToken();
    const attempt = 50 * MiB;
    const chunk = new Uint8Array(64 * 1024).fill(0x20);
    let delivered = 0;
    let cancelled = false;
    // Generated lazily, so the test itself never holds 50 MiB.
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (delivered >= attempt) return controller.close();
        delivered += chunk.length;
        controller.enqueue(chunk);
      },
      cancel() {
        cancelled = true;
      },
    });
    const refused = await send(packetRequest(token, stream));
    expect([refused.status, errorCodeOf(refused.json)]).toEqual([413, "payload_too_large"]);
    expect(cancelled).toBe(true);
    // The stream's queue may run one chunk ahead of the reader.
    expect(delivered).toBeLessThanOrEqual(BATCH_MAX_BYTES + 2 * chunk.length);

    const declared = await send(packetRequest(token, new Uint8Array(16), { "content-length": String(attempt) }));
    expect([declared.status, errorCodeOf(declared.json)]).toEqual([413, "payload_too_large"]);

    recordFigure(SECTION, "50 MiB attempt: bytes read before refusing", delivered, `limit ${BATCH_MAX_BYTES}; the rest never pulled, the stream cancelled (in-process: a running server's RSS is not measured)`);
  });
});

describe("nesting and batch-size limits on POST /api/v1/packets", () => {
  it(`takes a packet nested ${JSON_MAX_DEPTH} levels deep and refuses ${JSON_MAX_DEPTH + 1}, alone or in a batch`, async () => {
    const token = await createWriteToken();
    for (const asObjects of [false, true]) {
      const deepest = await send(packetRequest(token, nestedPacket(JSON_MAX_DEPTH, asObjects, 1)));
      expect(deepest.status).toBe(201);
      const tooDeep = await send(packetRequest(token, nestedPacket(JSON_MAX_DEPTH + 1, asObjects, 2)));
      expect([tooDeep.status, errorCodeOf(tooDeep.json)]).toEqual([400, "json_too_deep"]);
      expect(tooDeep.added.versions).toBe(0);

      const batch = await send(packetRequest(token, `{"packets":[${nestedPacket(JSON_MAX_DEPTH, asObjects, 3)}]}`));
      expect(batch.status).toBe(207);
      expect(batch.added.versions).toBe(1);
      const tooDeepBatch = await send(packetRequest(token, `{"packets":[${nestedPacket(1, asObjects, 4)},${nestedPacket(JSON_MAX_DEPTH + 1, asObjects, 5)}]}`));
      expect([tooDeepBatch.status, errorCodeOf(tooDeepBatch.json)]).toEqual([400, "json_too_deep"]);
      expect(tooDeepBatch.added.versions).toBe(0);
    }
    // A bare array 66 deep passes the batch's parse depth, then the packet's depth check.
    const bare = await send(packetRequest(token, `${"[".repeat(JSON_MAX_DEPTH + 2)}${"]".repeat(JSON_MAX_DEPTH + 2)}`));
    expect([bare.status, errorCodeOf(bare.json)]).toEqual([400, "json_too_deep"]);
    recordFigure(SECTION, "deepest nesting accepted", JSON_MAX_DEPTH, `${JSON_MAX_DEPTH + 1} refused with json_too_deep, alone or in a batch`);
  });

  it(`takes a batch of ${BATCH_MAX_PACKETS} packets and refuses ${BATCH_MAX_PACKETS + 1} without storing any`, async () => {
    const token = await createWriteToken();
    const batch = (count: number, tag: string) => JSON.stringify({ packets: Array.from({ length: count }, (_, i) => ({ summary: `${tag} ${i}` })) });
    const full = await send(packetRequest(token, batch(BATCH_MAX_PACKETS, "full")));
    expect(full.status).toBe(207);
    expect(full.added.versions).toBe(BATCH_MAX_PACKETS);
    const over = await send(packetRequest(token, batch(BATCH_MAX_PACKETS + 1, "over")));
    expect([over.status, errorCodeOf(over.json)]).toEqual([413, "payload_too_large"]);
    expect(over.json).toMatchObject({ error: { details: { limit_packets: BATCH_MAX_PACKETS } } });
    expect(over.added).toEqual({ versions: 0, threads: 0, events: 0 });
    recordFigure(SECTION, "largest batch accepted (packets)", BATCH_MAX_PACKETS, `${BATCH_MAX_PACKETS + 1} refused with 413`);
  });

  it("refuses only the item of a batch that is over the packet limit, storing the others", async () => {
    const token = await createWriteToken();
    const big = packetText(PACKET_MAX_BYTES + 1, "big item ");
    const answer = await send(packetRequest(token, `{"packets":[{"summary":"small item"},${big}]}`));
    expect(answer.status).toBe(207);
    expect((answer.json as { results: { status: number; error?: { code: string } }[] }).results.map((item) => [item.status, item.error?.code])).toEqual([
      [201, undefined],
      [413, "payload_too_large"],
    ]);
    expect(answer.added.versions).toBe(1);
  });

  it("records the limits themselves", () => {
    recordFigure(SECTION, "packet limit (bytes)", PACKET_MAX_BYTES, "exactly the limit taken, one byte more 413: with a correct, missing or false Content-Length, and chunked");
    recordFigure(SECTION, "batch limit (bytes)", BATCH_MAX_BYTES, "same four ways of sending");
  });
});
