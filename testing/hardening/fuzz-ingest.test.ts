import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { sqlExecutor } from "../../lib/db/client";
import { Prisma } from "../../lib/generated/prisma/client";
import { BATCH_MAX_BYTES, JSON_MAX_DEPTH, PACKET_MAX_BYTES } from "../../lib/contract/schema";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { recordAttempts, recordFigure } from "@/testing/reliability";
import { soakSize } from "@/testing/soak";
import { testsRunOnPostgresql } from "@/testing/postgresql";
import { createWriteToken, errorCodeOf, packetRequest, send, type Sent } from "@/testing/hardening/ingest-harness";
import {
  batchBody,
  deepBody,
  EXAMPLE_PACKETS,
  hostileKeysBody,
  invalidUtf8Body,
  mutatedPacket,
  packetOfSummaryLength,
  validPacket,
  veryDeepBody,
  wrongType,
} from "@/testing/hardening/packet-arbitraries";

/**
 * Fuzzed ingest (issue 8, item 1): thousands of generated bodies through the real
 * POST /api/v1/packets handler, called in-process with a real token against a
 * temporary SQLite file. Never a 5xx or a throw; a 2xx stores its packet exactly
 * once; a 4xx stores nothing; no prototype is polluted.
 * Replay a failure with FUZZ_SEED=<seed printed below>.
 */

// Thousands of bodies from one token, as fast as the handler takes them: the
// per-token rate limit is off here (its own suite is rate-limit.test.ts);
// freshDatabaseForThisFile reads the environment again.
process.env.BATON_RATE_LIMIT_PER_MINUTE = "0";
freshDatabaseForThisFile();
// About 45 s alone on two cores; a property of 1,500 bodies must not hit the 30 s default on a busy machine.
vi.setConfig({ testTimeout: 180_000 });

// The two passes fuzz different bodies (each a tenth in `npm test`, below): together they send about as many as one quarter did.
const SEED = Number(process.env.FUZZ_SEED ?? (testsRunOnPostgresql() ? 20_260_715 : 20_260_714));
const SECTION = "fuzzed-ingest";

let token = "";
const PROTOTYPES = [Object.prototype, Array.prototype, Function.prototype, String.prototype];
const prototypeKeys = PROTOTYPES.map((proto) => Reflect.ownKeys(proto).map(String).sort());

interface Sample {
  body: string | Uint8Array;
  sent: Sent;
}
const history: Sample[] = [];
const tally = { bodies: 0, status2xx: 0, status4xx: 0, status413: 0, status5xx: 0, stored: 0, duplicates: 0, maxMs: 0, totalMs: 0 };
const perProperty: Record<string, number> = {};
/** Bodies that got through, by property: a 5xx answer, or a refused body that stored something. */
const through: Record<string, number> = {};

beforeAll(async () => {
  token = await createWriteToken("fuzz");
  console.log(`fuzz-ingest: fast-check seed ${SEED} (replay with FUZZ_SEED=${SEED})`);
});

afterAll(() => {
  if (!tally.bodies) return;
  recordFigure(SECTION, "bodies sent", tally.bodies, `fast-check seed ${SEED}, through the real route handler in-process`);
  for (const [name, runs] of Object.entries(perProperty)) recordAttempts(SECTION, `fuzzed bodies: ${name}`, runs, through[name] ?? 0, "got through: a 5xx answer, or a refused body that stored something");
  recordFigure(SECTION, "answered 2xx", tally.status2xx);
  recordFigure(SECTION, "answered 4xx", tally.status4xx, `of which 413: ${tally.status413}`);
  recordFigure(SECTION, "answered 5xx", tally.status5xx, "must be 0");
  recordFigure(SECTION, "packet versions stored", tally.stored, "each checked: one row per 201, none per 200 duplicate or 4xx");
  recordFigure(SECTION, "duplicates answered 200", tally.duplicates);
  recordFigure(SECTION, "slowest request (ms)", Math.round(tally.maxMs), "includes 8 MiB bodies");
  recordFigure(SECTION, "mean time per request (ms)", Number((tally.totalMs / tally.bodies).toFixed(2)));
});

/** Straight through the driver: called for every stored packet, and a Prisma query costs a compile each. */
async function packetExists(id: unknown): Promise<boolean> {
  if (typeof id !== "string") return false;
  const sql = await sqlExecutor();
  return (await sql.query<{ id: string }>(Prisma.sql`SELECT "id" FROM "PacketVersion" WHERE "id" = ${id}`)).length === 1;
}

/** Sends a body and checks the invariants every answer must keep; returns what was sent. */
async function sendAndCheck(property: string, body: string | Uint8Array, headers: Record<string, string> = {}): Promise<Sent> {
  const sent = await send(packetRequest(token, body, headers));
  perProperty[property] = (perProperty[property] ?? 0) + 1;
  tally.bodies++;
  tally.maxMs = Math.max(tally.maxMs, sent.ms);
  tally.totalMs += sent.ms;
  const why = `${property}: ${sent.status} ${JSON.stringify(sent.json).slice(0, 300)}`;
  if (sent.status >= 500 || (sent.status >= 400 && sent.added.versions + sent.added.threads + sent.added.events > 0)) through[property] = (through[property] ?? 0) + 1;
  expect(sent.status, why).toBeLessThan(500);
  if (sent.status >= 500) tally.status5xx++;
  else if (sent.status >= 400) {
    tally.status4xx++;
    if (sent.status === 413) tally.status413++;
    expect(sent.added, `${why}: a refused body stored something`).toEqual({ versions: 0, threads: 0, events: 0 });
    expect(errorCodeOf(sent.json), why).toBeTypeOf("string");
  } else {
    tally.status2xx++;
    expect([200, 201, 207], why).toContain(sent.status);
    if (sent.status === 207) {
      const results = (sent.json as { results: { status: number; packet_id?: string }[] }).results;
      expect(sent.added.versions, why).toBe(results.filter((item) => item.status === 201).length);
      for (const item of results) {
        expect(item.status, why).toBeLessThan(500);
        if (item.status < 300) expect(await packetExists(item.packet_id), why).toBe(true);
        if (item.status === 200) tally.duplicates++;
      }
    } else {
      const result = sent.json as { packet_id: string; duplicate: boolean };
      expect(result.duplicate, why).toBe(sent.status === 200);
      expect(sent.added.versions, why).toBe(sent.status === 201 ? 1 : 0);
      expect(await packetExists(result.packet_id), why).toBe(true);
      if (sent.status === 200) tally.duplicates++;
    }
    tally.stored += sent.added.versions;
  }
  if (typeof body !== "string" || body.length < 64 * 1024) history.push({ body, sent });
  return sent;
}

/**
 * The full soak sends every run; `npm test` a tenth of each (testing/soak.ts), on each
 * database with its own seed (above), so the two passes together send about a thousand
 * bodies and reach storage on both in every property (decision 049).
 */
const SCALE = soakSize(0.1, 1);
const runs = (full: number) => Math.max(1, Math.round(full * SCALE));
const BODIES_AT_LEAST = soakSize(400, 5_000);

const run = <T>(arbitrary: fc.Arbitrary<T>, numRuns: number, check: (value: T) => Promise<void>) =>
  fc.assert(fc.asyncProperty(arbitrary, check), { seed: SEED, numRuns, endOnFailure: true });

describe("fuzzed ingest through POST /api/v1/packets", () => {
  it("stores every shared example packet once, then answers duplicates", async () => {
    for (const packet of EXAMPLE_PACKETS) {
      const body = JSON.stringify(packet);
      const first = await sendAndCheck("examples", body);
      expect([200, 201]).toContain(first.status);
      expect((await sendAndCheck("examples", body)).status).toBe(200);
    }
  });

  it("accepts valid packets in every accepted shape (1,500 bodies in the full soak)", async () => {
    await run(validPacket, runs(1_500), async (packet) => {
      const sent = await sendAndCheck("valid packets", JSON.stringify(packet));
      expect([200, 201], JSON.stringify(sent.json)).toContain(sent.status);
    });
  });

  it("answers mutated packets and bodies of the wrong type with 2xx or 4xx, never 5xx (1,300 bodies in the full soak)", async () => {
    await run(mutatedPacket, runs(900), async (packet) => {
      await sendAndCheck("mutated packets", JSON.stringify(packet));
    });
    await run(wrongType, runs(400), async (value) => {
      const sent = await sendAndCheck("wrong types", JSON.stringify(value));
      if (value === null || typeof value !== "object" || Array.isArray(value)) expect(sent.status).toBeGreaterThanOrEqual(400);
    });
  });

  it("keeps __proto__, constructor and prototype keys at every level from polluting anything (800 bodies in the full soak)", async () => {
    await run(hostileKeysBody, runs(800), async (body) => {
      await sendAndCheck("hostile keys", body);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  });

  it(`accepts nesting up to ${JSON_MAX_DEPTH} levels and refuses deeper, however deep (330 bodies)`, async () => {
    await run(deepBody, runs(300), async ({ depth, body }) => {
      const sent = await sendAndCheck("deep nesting", body);
      if (depth <= JSON_MAX_DEPTH) expect([200, 201], JSON.stringify(sent.json)).toContain(sent.status);
      else expect([sent.status, errorCodeOf(sent.json)]).toEqual([400, "json_too_deep"]);
    });
    await run(veryDeepBody, runs(30), async ({ body }) => {
      const sent = await sendAndCheck("very deep nesting", body);
      expect([sent.status, errorCodeOf(sent.json)]).toEqual([400, "json_too_deep"]);
    });
  });

  it("refuses invalid UTF-8 with invalid_encoding (300 bodies in the full soak)", async () => {
    await run(invalidUtf8Body, runs(300), async (bytes) => {
      const sent = await sendAndCheck("invalid UTF-8", new Uint8Array(bytes));
      expect([sent.status, errorCodeOf(sent.json)]).toEqual([400, "invalid_encoding"]);
    });
  });

  it("takes huge strings up to the packet limit and refuses them past it (44 bodies in the full soak)", async () => {
    const wrapper = packetOfSummaryLength(0, "").length;
    await run(fc.tuple(fc.integer({ min: -2_000, max: 2_000 }), fc.nat()), runs(40), async ([offset, nonce]) => {
      const body = packetOfSummaryLength(PACKET_MAX_BYTES - wrapper + offset, `huge ${nonce} ${offset} `);
      const sent = await sendAndCheck("huge strings", body);
      if (Buffer.byteLength(body) <= PACKET_MAX_BYTES) expect([200, 201]).toContain(sent.status);
      else expect([sent.status, errorCodeOf(sent.json)]).toEqual([413, "payload_too_large"]);
    });
    for (const size of [BATCH_MAX_BYTES, BATCH_MAX_BYTES + 1, 3 * BATCH_MAX_BYTES, 2 * PACKET_MAX_BYTES]) {
      const sent = await sendAndCheck("huge strings", packetOfSummaryLength(size, `beyond ${size} `));
      expect([sent.status, errorCodeOf(sent.json)]).toEqual([413, "payload_too_large"]);
    }
  });

  it("stores each item of a batch on its own (400 batches)", async () => {
    await run(batchBody, runs(400), async (body) => {
      const sent = await sendAndCheck("batches", body);
      expect(sent.status).toBe(207);
    });
  });

  it("refuses bodies that are not sent as JSON (100 bodies in the full soak)", async () => {
    await run(fc.tuple(validPacket, fc.constantFrom("text/plain", "application/x-www-form-urlencoded", "multipart/form-data", "", "application/jsonp", "text/json")), runs(100), async ([packet, type]) => {
      const sent = await sendAndCheck("not JSON content types", JSON.stringify(packet), { "content-type": type });
      expect([sent.status, errorCodeOf(sent.json)]).toEqual([415, "unsupported_media_type"]);
    });
  });

  it("answers a body sent again as it did the first time: 200 for a stored packet, the same 4xx otherwise (400 bodies in the full soak)", async () => {
    const earlier = history.slice();
    expect(earlier.length).toBeGreaterThan(BODIES_AT_LEAST / 5);
    await run(fc.nat({ max: earlier.length - 1 }), runs(400), async (index) => {
      const { body, sent: first } = earlier[index]!;
      if (first.status === 415) return; // sent without a JSON content type
      const again = await sendAndCheck("duplicates (same body again)", body);
      if (first.status === 201 || first.status === 200) {
        expect(again.status).toBe(200);
        expect((again.json as { packet_id: string }).packet_id).toBe((first.json as { packet_id: string }).packet_id);
      } else if (first.status === 207) {
        const before = (first.json as { results: { status: number; packet_id?: string }[] }).results;
        const now = (again.json as { results: { status: number; packet_id?: string }[] }).results;
        expect(now.map((item) => (item.status === 201 ? 200 : item.status))).toEqual(before.map((item) => (item.status === 201 ? 200 : item.status)));
        expect(now.map((item) => item.packet_id)).toEqual(before.map((item) => item.packet_id));
      } else {
        expect([again.status, errorCodeOf(again.json)]).toEqual([first.status, errorCodeOf(first.json)]);
      }
    });
  });

  it(`sent at least ${BODIES_AT_LEAST} bodies, and left every prototype as it was`, () => {
    console.log(`fuzz-ingest: ${tally.bodies} bodies, ${tally.status2xx} 2xx, ${tally.status4xx} 4xx, ${tally.status5xx} 5xx, ${tally.stored} stored, slowest ${Math.round(tally.maxMs)} ms (seed ${SEED})`);
    expect(tally.bodies).toBeGreaterThanOrEqual(BODIES_AT_LEAST);
    expect(tally.status5xx).toBe(0);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(([] as unknown as Record<string, unknown>).polluted).toBeUndefined();
    expect(PROTOTYPES.map((proto) => Reflect.ownKeys(proto).map(String).sort())).toEqual(prototypeKeys);
    expect(Object.getPrototypeOf({})).toBe(Object.prototype);
  });
});
