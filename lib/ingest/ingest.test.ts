import { describe, expect, it } from "vitest";
import { database } from "../db/client";
import { expectBatonError } from "@/testing/expect-baton-error";
import { routinePacket } from "@/testing/packets";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { listActiveThreads } from "../views/threads/queries";
import { threadListQuerySchema } from "../views/threads/filters";
import { ingestPacket, type IngestSource } from "./ingest";
import { ingestRequestBody } from "./request";

freshDatabaseForThisFile();

const http: IngestSource = { kind: "http", actor: "token:test" };
const HOUR = 3_600_000;
const T0 = Date.parse("2026-11-29T06:00:00.000Z");

/** A complete packet on its own thread `project@branch`; `extra` overrides fields. */
const packet = (project: string, branch: string, extra: Record<string, unknown> = {}) =>
  routinePacket({ project, branch, agent: "builder-1", summary: `work on ${project} ${branch}`, ...extra });

const iso = (ms: number) => new Date(ms).toISOString();

async function eventsFor(threadKey: string) {
  const db = await database();
  return db.ledgerEvent.findMany({ where: { threadKey }, orderBy: { seq: "asc" } });
}

/** The thread's ledger as [kind, version id] pairs, oldest first. */
async function kindsAndVersionsOf(threadKey: string) {
  return (await eventsFor(threadKey)).map((event) => [event.kind, event.versionId]);
}

async function threadRow(key: string) {
  const db = await database();
  return db.thread.findUniqueOrThrow({ where: { key } });
}

async function rowCounts() {
  const db = await database();
  return {
    versions: await db.packetVersion.count(),
    risks: await db.risk.count(),
    questions: await db.agentQuestion.count(),
    events: await db.ledgerEvent.count(),
    threads: await db.thread.count(),
    idempotency: await db.idempotencyRecord.count(),
  };
}

describe("ingestPacket", () => {
  it("creates a thread and an active version with a packet_received event", async () => {
    const receivedAt = new Date(T0);
    const result = await ingestPacket(packet("acme/new", "feat/one"), http, receivedAt);

    expect(result).toMatchObject({ thread_key: "acme/new@feat/one", duplicate: false, active: true });
    expect(result.packet_id).toMatch(/^pv_/);
    const thread = await threadRow("acme/new@feat/one");
    expect(thread.activeVersionId).toBe(result.packet_id);
    expect(thread.archived).toBe(false);
    expect(thread.project).toBe("acme/new");
    expect(thread.agent).toBe("builder-1");
    expect(thread.updatedAt.toISOString()).toBe(iso(T0));

    const db = await database();
    const version = await db.packetVersion.findUniqueOrThrow({ where: { id: result.packet_id } });
    expect(version.threadId).toBe(thread.id);
    expect(version.source).toBe("http");
    expect(JSON.parse(version.receivedJson)).toEqual(packet("acme/new", "feat/one"));
    expect(version.nextAction).toBe("run the suite again");
    expect(version.highestSeverity).toBe("low");
    expect(version.sortAt.toISOString()).toBe(iso(T0));

    const events = await eventsFor("acme/new@feat/one");
    expect(events.map((event) => [event.kind, event.versionId, event.actor])).toEqual([
      ["packet_received", result.packet_id, "token:test"],
    ]);
    expect(JSON.parse(events[0]!.data)).toMatchObject({ source: "http", superseded_on_arrival: false });
  });

  it("stores the same packet posted 50 times at once exactly once", async () => {
    const body = packet("acme/race", "main", { summary: "fifty at once" });
    const results = await Promise.all(Array.from({ length: 50 }, () => ingestPacket(structuredClone(body), http)));

    const fresh = results.filter((result) => !result.duplicate);
    const duplicates = results.filter((result) => result.duplicate);
    expect(fresh).toHaveLength(1);
    expect(duplicates).toHaveLength(49);
    const id = fresh[0]!.packet_id;
    expect(new Set(results.map((result) => result.packet_id))).toEqual(new Set([id]));

    const db = await database();
    const thread = await threadRow("acme/race@main");
    expect(await db.packetVersion.count({ where: { threadId: thread.id } })).toBe(1);
    expect(await db.risk.count({ where: { threadId: thread.id } })).toBe(1);
    const events = await eventsFor("acme/race@main");
    expect(events.map((event) => event.kind)).toEqual(["packet_received"]);
  });

  it("keeps one thread and the newest packet active when different packets for a new thread race", async () => {
    const order = [4, 9, 0, 7, 2, 5, 8, 1, 6, 3];
    const results = await Promise.all(
      order.map((hour) => ingestPacket(packet("acme/race", "many", { summary: `v${hour}`, created_at: iso(T0 + hour * HOUR) }), http)),
    );
    expect(results.filter((result) => result.duplicate)).toEqual([]);
    expect(new Set(results.map((result) => result.thread_key))).toEqual(new Set(["acme/race@many"]));

    const db = await database();
    const thread = await threadRow("acme/race@many");
    expect(await db.thread.count({ where: { key: "acme/race@many" } })).toBe(1);
    expect(await db.packetVersion.count({ where: { threadId: thread.id } })).toBe(10);
    expect(thread.activeVersionId).toBe(results[order.indexOf(9)]!.packet_id);

    // Every version but the newest was superseded exactly once: on arrival, or by a later packet.
    const events = await eventsFor("acme/race@many");
    const supersededLater = events.filter((event) => event.kind === "packet_superseded").map((event) => event.versionId);
    const supersededOnArrival = events
      .filter((event) => event.kind === "packet_received" && JSON.parse(event.data).superseded_on_arrival)
      .map((event) => event.versionId);
    const superseded = [...supersededLater, ...supersededOnArrival];
    expect(superseded).toHaveLength(9);
    expect(new Set(superseded)).toEqual(new Set(results.filter((_, i) => order[i] !== 9).map((result) => result.packet_id)));
  });

  it("keeps the newer packet active when an older one arrives late", async () => {
    const v2 = packet("acme/order", "late", { summary: "v2", created_at: iso(T0 + HOUR) });
    const v1 = packet("acme/order", "late", { summary: "v1", created_at: iso(T0) });
    const second = await ingestPacket(v2, http, new Date(T0 + 2 * HOUR));
    const first = await ingestPacket(v1, http, new Date(T0 + 3 * HOUR));

    expect(second.active).toBe(true);
    expect(first).toMatchObject({ active: false, duplicate: false, thread_key: second.thread_key });
    const thread = await threadRow(second.thread_key);
    expect(thread.activeVersionId).toBe(second.packet_id);
    expect(thread.activeSortAt?.toISOString()).toBe(iso(T0 + HOUR));

    const db = await database();
    const stored = await db.packetVersion.findUniqueOrThrow({ where: { id: first.packet_id } });
    expect(stored.summary).toBe("v1");
    expect(stored.sortAt.toISOString()).toBe(iso(T0));

    const events = await eventsFor(second.thread_key);
    expect(events.map((event) => [event.kind, event.versionId])).toEqual([
      ["packet_received", second.packet_id],
      ["packet_received", first.packet_id],
    ]);
    expect(JSON.parse(events[1]!.data)).toMatchObject({ superseded_on_arrival: true });
  });

  it("supersedes the active packet when a newer one arrives in order", async () => {
    const first = await ingestPacket(packet("acme/order", "in", { summary: "v1", created_at: iso(T0) }), http, new Date(T0));
    const second = await ingestPacket(
      packet("acme/order", "in", { summary: "v2", created_at: iso(T0 + HOUR) }),
      http,
      new Date(T0 + HOUR),
    );

    expect(second.active).toBe(true);
    expect((await threadRow(first.thread_key)).activeVersionId).toBe(second.packet_id);
    const events = await eventsFor(first.thread_key);
    expect(events.map((event) => [event.kind, event.versionId])).toEqual([
      ["packet_received", first.packet_id],
      ["packet_received", second.packet_id],
      ["packet_superseded", first.packet_id],
    ]);
    expect(JSON.parse(events[2]!.data)).toEqual({ superseded_by: second.packet_id });
  });

  it("gives a tie on created_at to the later arrival", async () => {
    const createdAt = iso(T0);
    const first = await ingestPacket(packet("acme/order", "tie", { summary: "a", created_at: createdAt }), http, new Date(T0 + 1000));
    const second = await ingestPacket(packet("acme/order", "tie", { summary: "b", created_at: createdAt }), http, new Date(T0 + 2000));
    expect(second.active).toBe(true);
    expect((await threadRow(first.thread_key)).activeVersionId).toBe(second.packet_id);

    // Arriving "earlier" by Baton's clock (a receivedAt before the active one's) loses the tie.
    const third = await ingestPacket(packet("acme/order", "tie", { summary: "c", created_at: createdAt }), http, new Date(T0 + 1500));
    expect(third.active).toBe(false);
    expect((await threadRow(first.thread_key)).activeVersionId).toBe(second.packet_id);
  });

  it("does not trust a created_at more than 24 h ahead, and flags clock_skew", async () => {
    const receivedAt = T0;
    const skewed = await ingestPacket(
      packet("acme/clock", "skew", { summary: "from the future", created_at: iso(receivedAt + 3 * 24 * HOUR) }),
      http,
      new Date(receivedAt),
    );
    expect(skewed.flags.map((flag) => flag.code)).toContain("clock_skew");
    const db = await database();
    const stored = await db.packetVersion.findUniqueOrThrow({ where: { id: skewed.packet_id } });
    expect(stored.sortAt.toISOString()).toBe(iso(receivedAt));
    expect(stored.producerCreatedAt?.toISOString()).toBe(iso(receivedAt + 3 * 24 * HOUR));
    expect(JSON.parse(stored.flags).map((flag: { code: string }) => flag.code)).toContain("clock_skew");

    // Were the future created_at trusted, this ordinary later packet could never become active.
    const later = await ingestPacket(
      packet("acme/clock", "skew", { summary: "sane clock", created_at: iso(receivedAt + 30_000) }),
      http,
      new Date(receivedAt + 60_000),
    );
    expect(later.active).toBe(true);
    expect(later.flags.map((flag) => flag.code)).not.toContain("clock_skew");
    expect((await threadRow(skewed.thread_key)).activeVersionId).toBe(later.packet_id);
  });

  it("trusts a created_at exactly 24 h ahead", async () => {
    const ahead = T0 + 24 * HOUR;
    const result = await ingestPacket(packet("acme/clock", "edge", { created_at: iso(ahead) }), http, new Date(T0));
    expect(result.flags.map((flag) => flag.code)).not.toContain("clock_skew");
    const db = await database();
    const stored = await db.packetVersion.findUniqueOrThrow({ where: { id: result.packet_id } });
    expect(stored.sortAt.toISOString()).toBe(iso(ahead));
  });

  it("archives a thread on status archived and re-opens it on the next packet", async () => {
    const board = async () =>
      (await listActiveThreads(threadListQuerySchema.parse({ project: "acme/archive", limit: 50 }))).threads.map(
        (card) => card.key,
      );
    const first = await ingestPacket(packet("acme/archive", "main", { summary: "working", created_at: iso(T0) }), http, new Date(T0));
    expect(await board()).toEqual([first.thread_key]);

    const archiving = await ingestPacket(
      packet("acme/archive", "main", { summary: "done", status: "archived", created_at: iso(T0 + HOUR) }),
      http,
      new Date(T0 + HOUR),
    );
    expect(archiving.active).toBe(true);
    expect((await threadRow(first.thread_key)).archived).toBe(true);
    expect(await board()).toEqual([]);

    const reopening = await ingestPacket(
      packet("acme/archive", "main", { summary: "back again", created_at: iso(T0 + 2 * HOUR) }),
      http,
      new Date(T0 + 2 * HOUR),
    );
    expect((await threadRow(first.thread_key)).archived).toBe(false);
    expect(await board()).toEqual([first.thread_key]);

    expect(await kindsAndVersionsOf(first.thread_key)).toEqual([
      ["packet_received", first.packet_id],
      ["packet_received", archiving.packet_id],
      ["packet_superseded", first.packet_id],
      ["thread_archived", archiving.packet_id],
      ["packet_received", reopening.packet_id],
      ["packet_superseded", archiving.packet_id],
      ["thread_reopened", reopening.packet_id],
    ]);
  });

  it("re-opens an archived thread on a late older packet without displacing the active one", async () => {
    const archiving = await ingestPacket(
      packet("acme/archive", "late", { summary: "done", status: "archived", created_at: iso(T0 + HOUR) }),
      http,
      new Date(T0 + HOUR),
    );
    expect((await threadRow(archiving.thread_key)).archived).toBe(true);
    const late = await ingestPacket(packet("acme/archive", "late", { summary: "older", created_at: iso(T0) }), http, new Date(T0 + 2 * HOUR));

    expect(late.active).toBe(false);
    const thread = await threadRow(archiving.thread_key);
    expect(thread.archived).toBe(false);
    expect(thread.activeVersionId).toBe(archiving.packet_id);
    expect(await kindsAndVersionsOf(archiving.thread_key)).toEqual([
      ["packet_received", archiving.packet_id],
      ["thread_archived", archiving.packet_id],
      ["packet_received", late.packet_id],
      ["thread_reopened", late.packet_id],
    ]);
  });

  describe("Idempotency-Key", () => {
    const keyed = (key: string): IngestSource => ({ ...http, idempotency: { tokenId: "tok_test", key } });

    it("answers a repeated key and body with the same packet", async () => {
      const body = packet("acme/idem", "same", { summary: "once" });
      const first = await ingestPacket(body, keyed("k-same"));
      const again = await ingestPacket(structuredClone(body), keyed("k-same"));
      expect(first.duplicate).toBe(false);
      expect(again).toMatchObject({ packet_id: first.packet_id, duplicate: true, active: true });
      const db = await database();
      expect(await db.packetVersion.count({ where: { summary: "once" } })).toBe(1);
      expect(await db.idempotencyRecord.findUnique({ where: { tokenId_key: { tokenId: "tok_test", key: "k-same" } } })).toMatchObject({
        packetId: first.packet_id,
      });
    });

    it("refuses the same key with another body and stores nothing", async () => {
      await ingestPacket(packet("acme/idem", "other", { summary: "first body" }), keyed("k-other"));
      const before = await rowCounts();
      const error = await expectBatonError(
        ingestPacket(packet("acme/idem", "other", { summary: "second body" }), keyed("k-other")),
        "idempotency_key_reused",
      );
      expect(error.status).toBe(422);
      expect(await rowCounts()).toEqual(before);
      const db = await database();
      expect(await db.packetVersion.count({ where: { summary: "second body" } })).toBe(0);
    });

    it("scopes keys per token", async () => {
      const a = await ingestPacket(packet("acme/idem", "scoped", { summary: "token a" }), {
        ...http,
        idempotency: { tokenId: "tok_a", key: "shared" },
      });
      const b = await ingestPacket(packet("acme/idem", "scoped", { summary: "token b" }), {
        ...http,
        idempotency: { tokenId: "tok_b", key: "shared" },
      });
      expect(b.duplicate).toBe(false);
      expect(b.packet_id).not.toBe(a.packet_id);
    });
  });

  it.each([
    ["an array", [{ summary: "in an array" }], "not_a_packet"],
    ["null", null, "not_a_packet"],
    ["a string", "summary", "not_a_packet"],
    ["no core field", { title: "no core field here", body: "x" }, "no_core_fields"],
    ["wrong types", { summary: 42, next_action: ["not", "a", "string"], open_risks: "everything" }, "invalid_fields"],
    [
      "one bad field among good ones",
      {
        summary: "fine",
        project: "acme/invalid",
        open_risks: [{ severity: "high", detail: "real risk" }],
        questions_for_human: ["real question?"],
        changed_files: "src/a.ts",
      },
      "invalid_fields",
    ],
  ])("stores nothing for %s", async (_name, body, code) => {
    const before = await rowCounts();
    await expectBatonError(ingestPacket(body, http), code);
    expect(await rowCounts()).toEqual(before);
  });

  it("names every offending field of an invalid packet", async () => {
    const error = await expectBatonError(
      ingestPacket({ summary: 42, next_action: ["x"], open_risks: "everything" }, http),
      "invalid_fields",
    );
    const fields = (error.details as { fields: { field: string }[] }).fields.map((field) => field.field).sort();
    expect(fields).toEqual(["next_action", "open_risks", "summary"]);
  });

  it("stores risks and questions with severities and fingerprints", async () => {
    const result = await ingestPacket(
      packet("acme/risks", "main", {
        open_risks: [
          { id: "r-a", severity: "blocker", detail: "prod plan deletes 3 resources", mitigation: "review the plan" },
          { severity: "WARN", detail: "Prod  plan deletes 12 resources" },
          { severity: "P1", detail: "retries may run twice" },
          { severity: "urgent-ish", detail: "flaky test quarantined" },
          "a bare string risk",
        ],
        questions_for_human: [
          { id: "q-scope", question: "Refactor the loader too?", options: ["yes", "no"], blocking: true, context: "it is small" },
          "Which reviewer?",
        ],
      }),
      http,
    );
    expect(result.flags.map((flag) => flag.code)).toEqual(expect.arrayContaining(["unknown_severity", "open_questions"]));

    const db = await database();
    const risks = await db.risk.findMany({ where: { versionId: result.packet_id }, orderBy: { position: "asc" } });
    expect(risks.map((risk) => [risk.position, risk.riskId, risk.severity, risk.severityRaw, risk.detail, risk.mitigation])).toEqual([
      [0, "r-a", "critical", "blocker", "prod plan deletes 3 resources", "review the plan"],
      [1, "r1", "medium", "WARN", "Prod  plan deletes 12 resources", null],
      [2, "r2", "high", "P1", "retries may run twice", null],
      [3, "r3", "medium", "urgent-ish", "flaky test quarantined", null],
      [4, "r4", "medium", null, "a bare string risk", null],
    ]);
    for (const risk of risks) expect(risk.fingerprint).toMatch(/^[0-9a-f]{24}$/);
    // Case, spacing and counts do not change a risk's identity; other words do.
    expect(risks[1]!.fingerprint).toBe(risks[0]!.fingerprint);
    expect(new Set(risks.map((risk) => risk.fingerprint)).size).toBe(4);
    const thread = await threadRow(result.thread_key);
    expect(risks.every((risk) => risk.threadId === thread.id)).toBe(true);

    const version = await db.packetVersion.findUniqueOrThrow({ where: { id: result.packet_id } });
    expect(version.highestSeverity).toBe("critical");
    expect(JSON.parse(version.riskCounts)).toEqual({ critical: 1, high: 1, medium: 3, low: 0, info: 0 });
    expect(version.questionCount).toBe(2);

    const questions = await db.agentQuestion.findMany({ where: { versionId: result.packet_id }, orderBy: { position: "asc" } });
    expect(
      questions.map((q) => [q.position, q.questionId, q.question, q.context, JSON.parse(q.options), q.blocking, q.threadId]),
    ).toEqual([
      [0, "q-scope", "Refactor the loader too?", "it is small", ["yes", "no"], true, thread.id],
      [1, "q1", "Which reviewer?", null, [], false, thread.id],
    ]);
  });

  it("has the database refuse UPDATE and DELETE on the ledger and on versions", async () => {
    const result = await ingestPacket(packet("acme/ledger", "main"), http);
    const db = await database();
    const [event] = await eventsFor(result.thread_key);
    await expect(db.$executeRawUnsafe(`UPDATE "LedgerEvent" SET "kind" = 'tampered' WHERE "seq" = ${event!.seq}`)).rejects.toThrow(
      /append-only/,
    );
    await expect(db.$executeRawUnsafe(`DELETE FROM "LedgerEvent" WHERE "seq" = ${event!.seq}`)).rejects.toThrow(/append-only/);
    await expect(db.$executeRawUnsafe(`DELETE FROM "LedgerEvent"`)).rejects.toThrow(/append-only/);
    await expect(
      db.$executeRawUnsafe(`UPDATE "PacketVersion" SET "summary" = 'tampered' WHERE "id" = '${result.packet_id}'`),
    ).rejects.toThrow(/immutable|append-only/);
    await expect(db.$executeRawUnsafe(`DELETE FROM "PacketVersion" WHERE "id" = '${result.packet_id}'`)).rejects.toThrow(
      /immutable|append-only/,
    );

    expect(await db.ledgerEvent.findUniqueOrThrow({ where: { seq: event!.seq } })).toEqual(event);
    expect((await db.packetVersion.findUniqueOrThrow({ where: { id: result.packet_id } })).summary).toBe(
      "work on acme/ledger main",
    );
  });
});

describe("ingestRequestBody", () => {
  const send = (body: unknown) => {
    const text = typeof body === "string" ? body : JSON.stringify(body);
    return ingestRequestBody(text, Buffer.byteLength(text), http);
  };

  it("answers 201 for a new packet and 200 for a duplicate", async () => {
    const body = packet("acme/request", "single");
    const created = await send(body);
    const again = await send(body);
    expect(created.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ packet_id: (created.body as { packet_id: string }).packet_id, duplicate: true });
  });

  it("answers a batch with 207 and a status per item", async () => {
    const good = packet("acme/request", "batch", { summary: "batch item" });
    const before = await rowCounts();
    const { status, body } = await send({ packets: [good, good, { summary: 42 }] });
    expect(status).toBe(207);
    const { results } = body as { results: Record<string, unknown>[] };
    expect(results.map((item) => [item.index, item.status])).toEqual([
      [0, 201],
      [1, 200],
      [2, 400],
    ]);
    expect(results[1]!.packet_id).toBe(results[0]!.packet_id);
    expect(results[1]!.duplicate).toBe(true);
    expect(results[2]!.error).toMatchObject({ code: "invalid_fields" });
    const after = await rowCounts();
    expect(after.versions - before.versions).toBe(1);
    expect(after.threads - before.threads).toBe(1);
  });

  it("refuses a batch of more than 100 packets and stores none of it", async () => {
    const packets = Array.from({ length: 101 }, (_, index) => packet("acme/request", `many-${index}`));
    const before = await rowCounts();
    const error = await expectBatonError(send({ packets }), "payload_too_large");
    expect(error.status).toBe(413);
    expect(error.details).toEqual({ limit_packets: 100 });
    expect(await rowCounts()).toEqual(before);
  });

  it("accepts a batch of exactly 100 packets", async () => {
    const packets = Array.from({ length: 100 }, (_, index) => packet("acme/request", `hundred-${index}`));
    const { status, body } = await send({ packets });
    expect(status).toBe(207);
    expect((body as { results: { status: number }[] }).results.filter((item) => item.status === 201)).toHaveLength(100);
  });

  const PACKET_MAX = 1_048_576;
  /** A packet whose JSON text is exactly `bytes` long, padded through its summary. */
  function packetText(bytes: number, branch: string): string {
    const shell = JSON.stringify(packet("acme/request", branch, { summary: "" }));
    const text = JSON.stringify(packet("acme/request", branch, { summary: "x".repeat(bytes - Buffer.byteLength(shell)) }));
    expect(Buffer.byteLength(text)).toBe(bytes);
    return text;
  }

  it("accepts a packet of exactly 1 MiB and refuses one byte more", async () => {
    const exact = packetText(PACKET_MAX, "big-exact");
    const accepted = await send(exact);
    expect(accepted.status).toBe(201);

    const before = await rowCounts();
    const error = await expectBatonError(send(packetText(PACKET_MAX + 1, "big-over")), "payload_too_large");
    expect(error.details).toEqual({ limit_bytes: PACKET_MAX });
    expect(await rowCounts()).toEqual(before);
  });

  it("refuses a batch item over 1 MiB on its own and stores the others", async () => {
    const big = JSON.parse(packetText(PACKET_MAX + 1, "big-item")) as unknown;
    const small = packet("acme/request", "small-item");
    const { status, body } = await send({ packets: [big, small] });
    expect(status).toBe(207);
    const { results } = body as { results: { status: number; error?: { code: string } }[] };
    expect(results.map((item) => item.status)).toEqual([413, 201]);
    expect(results[0]!.error?.code).toBe("payload_too_large");
  });
});

describe("later fixes", () => {
  const batchSource = (key: string): IngestSource => ({ ...http, idempotency: { tokenId: "tok_batch", key } });

  it("refuses an Idempotency-Key reused with another batch, storing none of it", async () => {
    const first = { packets: [packet("acme/idem-batch", "b1"), packet("acme/idem-batch", "b2")] };
    const answer = await ingestRequestBody(JSON.stringify(first), 10, batchSource("batch-key-1"));
    expect(answer.status).toBe(207);
    const repeat = await ingestRequestBody(JSON.stringify(first), 10, batchSource("batch-key-1"));
    const statuses = (repeat.body as { results: { status: number }[] }).results.map((item) => item.status);
    expect(statuses).toEqual([200, 200]);
    const before = await rowCounts();
    const other = { packets: [packet("acme/idem-batch", "b3")] };
    await expect(ingestRequestBody(JSON.stringify(other), 10, batchSource("batch-key-1"))).rejects.toMatchObject({
      code: "idempotency_key_reused",
    });
    expect(await rowCounts()).toEqual(before);
  });

  it("accepts a packet nested 64 levels deep inside a batch, and refuses 65", async () => {
    // `levels` arrays deep; the packet object itself is one more level.
    const nest = (levels: number) => {
      let value: unknown = "leaf";
      for (let i = 0; i < levels; i++) value = [value];
      return value;
    };
    const at64 = packet("acme/deep", "b64", { extra_nesting: nest(63) });
    const single = await ingestRequestBody(JSON.stringify(at64), 10, http);
    expect(single.status).toBe(201);
    const batch = await ingestRequestBody(JSON.stringify({ packets: [packet("acme/deep", "b64b", { extra_nesting: nest(63) })] }), 10, http);
    expect((batch.body as { results: { status: number }[] }).results[0]?.status).toBe(201);
    const at65 = packet("acme/deep", "b65", { extra_nesting: nest(64) });
    // A batch carrying a too-deep packet is itself too deep: the whole request is refused.
    await expect(ingestRequestBody(JSON.stringify({ packets: [at65] }), 10, http)).rejects.toMatchObject({
      code: "json_too_deep",
    });
    await expect(ingestRequestBody(JSON.stringify(at65), 10, http)).rejects.toMatchObject({ code: "json_too_deep" });
  });

  it("does not move a thread on the board when an older packet arrives late", async () => {
    const newer = await ingestPacket(packet("acme/late-order", "main", { created_at: iso(T0 + 2 * HOUR) }), http, new Date(T0 + 3 * HOUR));
    const before = await threadRow(newer.thread_key);
    const older = await ingestPacket(packet("acme/late-order", "main", { created_at: iso(T0), summary: "older" }), http, new Date(T0 + 5 * HOUR));
    expect(older.active).toBe(false);
    const after = await threadRow(newer.thread_key);
    expect(after.updatedAt.toISOString()).toBe(before.updatedAt.toISOString());
    expect(after.activeVersionId).toBe(newer.packet_id);
  });
});

/**
 * Arrival order decides every tie (decision 024): without created_at, packets of one
 * thread received in the same millisecond tie on both timestamps, and the random tail
 * of their ids used to pick the active one (16 of 20 batches wrong before the fix).
 */
describe("arrival order", () => {
  it("makes the last packet of each batch active, for 20 batches of 5 packets of a new thread", async () => {
    for (let round = 0; round < 20; round++) {
      const project = `acme/batch-order-${round}`;
      const packets = Array.from({ length: 5 }, (_, index) => packet(project, "main", { summary: `round ${round} packet ${index}` }));
      const answer = await ingestRequestBody(JSON.stringify({ packets }), 10, http);
      const results = (answer.body as { results: { packet_id: string; thread_key: string }[] }).results;
      const thread = await threadRow(results[0]!.thread_key);
      expect(thread.activeVersionId, `round ${round}`).toBe(results[4]!.packet_id);
    }
  });

  it("makes the last of several packets received in the same millisecond active, one after another", async () => {
    const receivedAt = new Date(T0 + 7 * HOUR);
    for (let round = 0; round < 10; round++) {
      const project = `acme/same-ms-${round}`;
      let last = "";
      for (let index = 0; index < 4; index++) {
        const result = await ingestPacket(packet(project, "main", { summary: `same ms ${round}.${index}` }), http, receivedAt);
        expect(result.active, `round ${round} packet ${index}`).toBe(true);
        last = result.packet_id;
      }
      expect((await threadRow(`${project}@main`)).activeVersionId).toBe(last);
    }
  });

  it("gives every new version the next arrival sequence, and a duplicate none", async () => {
    const first = await ingestPacket(packet("acme/seq", "main", { summary: "seq one" }), http);
    const second = await ingestPacket(packet("acme/seq", "main", { summary: "seq two" }), http);
    await ingestPacket(packet("acme/seq", "main", { summary: "seq two" }), http);
    const db = await database();
    const rows = await db.packetVersion.findMany({ where: { id: { in: [first.packet_id, second.packet_id] } }, orderBy: { arrivalSeq: "asc" } });
    expect(rows.map((row) => row.id)).toEqual([first.packet_id, second.packet_id]);
    expect(rows[1]!.arrivalSeq! - rows[0]!.arrivalSeq!).toBe(1);
    expect((await threadRow(second.thread_key)).activeArrivalSeq).toBe(rows[1]!.arrivalSeq);
  });

  it("still lets a later created_at win over a later arrival", async () => {
    const newer = await ingestPacket(packet("acme/seq-created", "main", { created_at: iso(T0 + HOUR) }), http, new Date(T0 + 2 * HOUR));
    const older = await ingestPacket(packet("acme/seq-created", "main", { created_at: iso(T0), summary: "older" }), http, new Date(T0 + 2 * HOUR));
    expect(older.active).toBe(false);
    expect((await threadRow(newer.thread_key)).activeVersionId).toBe(newer.packet_id);
  });
});
