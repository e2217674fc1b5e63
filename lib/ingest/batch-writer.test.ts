import { describe, expect, it } from "vitest";
import { database } from "../db/client";
import { minutePacket } from "@/testing/packets";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { announceArrival, ingestWriterStats } from "./batch-writer";
import { ingestPacket, type IngestSource } from "./ingest";
import { ingestRequestBody } from "./request";

freshDatabaseForThisFile();

const http: IngestSource = { kind: "http", actor: "token:test" };

const packet = minutePacket;

describe("group commit", () => {
  it("stores packets that arrive together as if one after another", async () => {
    // Three threads, ten versions each, submitted in one burst in shuffled order.
    const minutes = [7, 2, 9, 0, 5, 1, 8, 3, 6, 4];
    const burst = ["gc-a", "gc-b", "gc-c"].flatMap((thread) => minutes.map((minute) => packet(thread, minute)));
    const before = ingestWriterStats();
    const results = await Promise.all(burst.map((body) => ingestPacket(body, http)));
    const after = ingestWriterStats();

    expect(results.every((result) => !result.duplicate)).toBe(true);
    expect(after.packets - before.packets).toBe(30);
    expect(after.batches - before.batches).toBeLessThan(30);

    const db = await database();
    for (const thread of ["gc-a", "gc-b", "gc-c"]) {
      const row = await db.thread.findUniqueOrThrow({ where: { key: thread }, include: { activeVersion: true } });
      expect(row.activeVersion?.nextAction).toBe("step 9");
      expect(await db.packetVersion.count({ where: { threadId: row.id } })).toBe(10);
      expect(await db.risk.count({ where: { threadId: row.id } })).toBe(10);
      // Each arrival that was newer than the active one superseded it: 7, then 9 (2, 0, 5... arrive late).
      const superseded = await db.ledgerEvent.count({ where: { threadKey: thread, kind: "packet_superseded" } });
      expect(superseded).toBe(1);
    }
  });

  it("refuses one packet of a batch without failing its neighbours", async () => {
    const keyed = (key: string): IngestSource => ({ ...http, idempotency: { tokenId: "tok_gc", key } });
    const outcomes = await Promise.allSettled([
      ingestPacket(packet("gc-keys", 1), keyed("k-1")),
      ingestPacket(packet("gc-keys", 2), keyed("k-1")),
      ingestPacket(packet("gc-keys", 3), http),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ code: "idempotency_key_reused" });
    const db = await database();
    const thread = await db.thread.findUniqueOrThrow({ where: { key: "gc-keys" } });
    expect(await db.packetVersion.count({ where: { threadId: thread.id } })).toBe(2);
  });

  it("waits for a packet whose request has announced itself, and commits both together", async () => {
    const arrival = announceArrival();
    const before = ingestWriterStats();
    // The first packet's writer sees one more request announced and waits for it.
    const first = ingestPacket(packet("gc-wait", 1), http);
    const second = ingestPacket(packet("gc-wait", 2), { ...http, arrival });
    await Promise.all([first, second]);
    const after = ingestWriterStats();
    expect(after.packets - before.packets).toBe(2);
    expect(after.batches - before.batches).toBe(1);
  });

  it("commits a lone packet without waiting for company", async () => {
    await ingestPacket(packet("gc-lone", 1), http);
    await new Promise((resolve) => setTimeout(resolve, 60));
    // Nothing announced and nothing streaming: no gather wait before the commit.
    const before = ingestWriterStats();
    await ingestPacket(packet("gc-lone", 2), http);
    const after = ingestWriterStats();
    expect(after.batches - before.batches).toBe(1);
    expect(after.waits - before.waits).toBe(0);
  });

  it("a sequential client waits only for an occasional probe", async () => {
    const before = ingestWriterStats();
    for (let minute = 0; minute < 40; minute++) await ingestPacket(packet("gc-sequential", minute), http);
    const after = ingestWriterStats();
    expect(after.packets - before.packets).toBe(40);
    // At most one probe per 50 ms; 40 lone commits take far longer than that only on a very slow disk.
    expect(after.waits - before.waits).toBeLessThan(40);
  });

  it("stores a batch request's packets in one commit, in their order", async () => {
    const packets = Array.from({ length: 50 }, (_, minute) => packet("gc-request", 100 - minute));
    const before = ingestWriterStats();
    const answer = await ingestRequestBody(JSON.stringify({ packets }), 10, http);
    const after = ingestWriterStats();
    const statuses = (answer.body as { results: { status: number; active: boolean }[] }).results;
    expect(statuses.map((item) => item.status)).toEqual(Array(50).fill(201));
    // Minutes run backwards: only the first item was ever the newest.
    expect(statuses.map((item) => item.active)).toEqual([true, ...Array(49).fill(false)]);
    expect(after.batches - before.batches).toBe(1);
  });
});
