import { beforeAll, describe, expect, it } from "vitest";
import type { Person } from "../../auth/roles";
import { createFirstAdmin } from "../../auth/users";
import { loadBoard } from "../board";
import { database, inSqlTransaction } from "../../db/client";
import { decide } from "../../human/actions";
import { ingestPacket } from "../../ingest/ingest";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { threadFiltersSchema } from "../../views/threads/filters";
import { scheduleWriteBack } from "../../human/writeback/write-human-section";
import { recordSessionEvent } from "./session-events";
import { checkStale, recordStaleSpell, recordStaleSpellsTogether, SPELLS_PER_TRANSACTION, staleSpellOf, type StaleCandidate } from "./stale";
import { countStatements } from "@/testing/count-statements";
import { testsRunOnPostgresql } from "@/testing/postgresql";

freshDatabaseForThisFile();

const HOUR = 3_600_000;
// Relative to the real clock: people's decisions are stamped with it.
const NOW = Date.now();
const at = (ms: number) => new Date(ms);

let person: Person;
beforeAll(async () => {
  person = await createFirstAdmin({ username: "stale-admin", password: "a long enough password" });
});

let serial = 0;
/** A clean packet (Ready on the board) on a thread of its own, received at `receivedAtMs`; returns the thread key. */
async function threadReceivedAt(receivedAtMs: number, name = "thread", extra: Record<string, unknown> = {}): Promise<string> {
  const thread = `stale/${name}-${++serial}`;
  await sendPacket(thread, receivedAtMs, extra);
  return thread;
}

async function sendPacket(thread: string, receivedAtMs: number, extra: Record<string, unknown> = {}): Promise<string> {
  const body = { thread, summary: `work on ${thread} at ${receivedAtMs}`, next_action: "continue", ...extra };
  return (await ingestPacket(body, { kind: "http", actor: "test" }, at(receivedAtMs))).packet_id;
}

/** The spells a check recorded for `thread`. */
async function checkFor(thread: string, nowMs: number) {
  return (await checkStale(at(nowMs))).filter((spell) => spell.threadKey === thread);
}

async function staleEvents(thread: string) {
  const rows = await (await database()).ledgerEvent.findMany({ where: { threadKey: thread, kind: "thread_stale" }, orderBy: { seq: "asc" } });
  return rows.map((row) => ({ actor: row.actor, versionId: row.versionId, data: JSON.parse(row.data) as unknown }));
}

async function candidateFor(thread: string): Promise<StaleCandidate> {
  const row = await (await database()).thread.findUniqueOrThrow({ where: { key: thread } });
  return {
    id: row.id,
    key: row.key,
    activeVersionId: row.activeVersionId!,
    activeReceivedAt: row.activeReceivedAt!,
    lastSessionKind: row.lastSessionKind as StaleCandidate["lastSessionKind"],
    lastSessionAt: row.lastSessionAt,
    staleNotifiedFor: row.staleNotifiedFor,
    decidedAt: null,
  };
}

async function placed(thread: string, nowMs: number) {
  const board = await loadBoard(threadFiltersSchema.parse({}), { now: nowMs });
  for (const column of board.columns) {
    const card = column.cards.find((candidate) => candidate.key === thread);
    if (card) return { column: column.id, flags: card.active_packet.flags.map((flag) => flag.code) };
  }
  return null;
}

describe("checkStale", () => {
  it("records one thread_stale event per spell, however often it runs", async () => {
    const thread = await threadReceivedAt(NOW - 30 * HOUR);
    const packetReceived = at(NOW - 30 * HOUR).toISOString();
    expect(await checkFor(thread, NOW - 7 * HOUR)).toEqual([]);
    expect(await checkFor(thread, NOW - 6 * HOUR)).toEqual([]); // exactly 24 h: not yet
    const [spell] = await checkFor(thread, NOW - 5 * HOUR);
    expect(spell?.lastActivity.toISOString()).toBe(packetReceived);
    expect(await checkFor(thread, NOW - 4 * HOUR)).toEqual([]);
    expect(await checkFor(thread, NOW)).toEqual([]);

    const events = await staleEvents(thread);
    expect(events).toEqual([{ actor: "watchdog", versionId: spell!.versionId, data: { last_activity: packetReceived, stale_hours: 24 } }]);
    const row = await (await database()).thread.findUniqueOrThrow({ where: { key: thread } });
    expect(row.staleNotifiedFor?.toISOString()).toBe(packetReceived);
  });

  it("the board agrees: the card is in Stale, with the stale flag", async () => {
    const thread = await threadReceivedAt(NOW - 30 * HOUR);
    expect(await placed(thread, NOW)).toEqual({ column: "stale", flags: expect.arrayContaining(["stale"]) as unknown });
    expect(await placed(thread, NOW - 10 * HOUR)).toMatchObject({ column: "ready" });
  });

  it("a new packet starts a new spell", async () => {
    const thread = await threadReceivedAt(NOW - 80 * HOUR);
    expect(await checkFor(thread, NOW - 50 * HOUR)).toHaveLength(1);
    await sendPacket(thread, NOW - 40 * HOUR);
    expect(await checkFor(thread, NOW - 20 * HOUR)).toEqual([]);
    const [second] = await checkFor(thread, NOW - 10 * HOUR);
    expect(second?.lastActivity.toISOString()).toBe(at(NOW - 40 * HOUR).toISOString());
    expect(await checkFor(thread, NOW)).toEqual([]);
    expect((await staleEvents(thread)).map((event) => (event.data as { last_activity: string }).last_activity)).toEqual([
      at(NOW - 80 * HOUR).toISOString(),
      at(NOW - 40 * HOUR).toISOString(),
    ]);
  });

  it("a session report starts a new spell, and a heartbeat keeps the card Running until the threshold", async () => {
    const thread = await threadReceivedAt(NOW - 80 * HOUR);
    expect(await checkFor(thread, NOW - 50 * HOUR)).toHaveLength(1);
    const heartbeatAt = NOW - 40 * HOUR;
    await recordSessionEvent(thread, { kind: "heartbeat", at: at(heartbeatAt).toISOString() }, { actor: "token:test", now: at(heartbeatAt) });
    expect(await placed(thread, heartbeatAt + HOUR)).toMatchObject({ column: "running" });
    expect(await checkFor(thread, heartbeatAt + 24 * HOUR)).toEqual([]);
    // Silence: past the threshold the card leaves Running for Stale, and the spell is recorded once.
    expect(await placed(thread, heartbeatAt + 25 * HOUR)).toMatchObject({ column: "stale" });
    const [spell] = await checkFor(thread, heartbeatAt + 25 * HOUR);
    expect(spell?.lastActivity.toISOString()).toBe(at(heartbeatAt).toISOString());
    expect(await staleEvents(thread)).toHaveLength(2);
  });

  it("a person's decision starts a new spell", async () => {
    const thread = await threadReceivedAt(NOW - 80 * HOUR);
    expect(await checkFor(thread, NOW - HOUR)).toHaveLength(1);
    const packet = (await (await database()).thread.findUniqueOrThrow({ where: { key: thread } })).activeVersionId!;
    const state = await decide(person, thread, { kind: "approved", packet_id: packet, base_revision: 0 });
    await scheduleWriteBack([thread]);
    const decidedAt = Date.parse(state.human.decision!.at);
    expect(await checkFor(thread, decidedAt + HOUR)).toEqual([]);
    expect(await placed(thread, decidedAt + HOUR)).toMatchObject({ column: "approved" });
    const [spell] = await checkFor(thread, decidedAt + 25 * HOUR);
    expect(spell?.lastActivity.getTime()).toBe(decidedAt);
    expect(await staleEvents(thread)).toHaveLength(2);
  });

  it("two checks at once record one event", async () => {
    const thread = await threadReceivedAt(NOW - 30 * HOUR);
    const both = await Promise.all([checkStale(at(NOW)), checkStale(at(NOW)), checkStale(at(NOW))]);
    expect(both.flat().filter((spell) => spell.threadKey === thread)).toHaveLength(1);
    expect(await staleEvents(thread)).toHaveLength(1);
  });

  it("a check working from an old reading records nothing once another recorded the spell, or once something happened", async () => {
    const recorded = await threadReceivedAt(NOW - 30 * HOUR);
    const reading = await candidateFor(recorded);
    const spell = staleSpellOf(reading, NOW, 24 * HOUR)!;
    expect(spell).not.toBeNull();
    expect(await checkFor(recorded, NOW)).toHaveLength(1);
    // As another instance would, from the reading it made before the first one wrote.
    expect(await inSqlTransaction((sql) => recordStaleSpell(sql, reading, spell, at(NOW), 24))).toBe(false);
    expect(await staleEvents(recorded)).toHaveLength(1);

    const woke = await threadReceivedAt(NOW - 30 * HOUR);
    const before = await candidateFor(woke);
    await recordSessionEvent(woke, { kind: "heartbeat", at: at(NOW - 10 * 60_000).toISOString() }, { actor: "token:test", now: at(NOW) });
    expect(await inSqlTransaction((sql) => recordStaleSpell(sql, before, staleSpellOf(before, NOW, 24 * HOUR)!, at(NOW), 24))).toBe(false);
    expect(await staleEvents(woke)).toEqual([]);
  });

  it.skipIf(!testsRunOnPostgresql())("on PostgreSQL, a check records its spells together: one transaction per SPELLS_PER_TRANSACTION", async () => {
    const start = NOW - 3000 * HOUR;
    const threads: string[] = [];
    for (let n = 0; n < SPELLS_PER_TRANSACTION + 3; n++) threads.push(await threadReceivedAt(start + n * 60_000, "fleet"));
    // So long ago that the other tests' threads did not exist yet: this check sees only the fleet.
    const later = start + 25 * HOUR;
    const counted = countStatements();
    const spells = await checkStale(at(later)).finally(() => counted.stop());
    expect(spells.map((spell) => spell.threadKey).sort()).toEqual([...threads].sort());
    expect(counted.texts().filter((text) => text.includes("pg_advisory_xact_lock"))).toHaveLength(2);
    for (const thread of threads) expect(await staleEvents(thread)).toHaveLength(1);
    expect(await checkStale(at(later))).toEqual([]);
  });

  it.skipIf(!testsRunOnPostgresql())("on PostgreSQL, spells recorded together keep each spell's conditions: an old reading records nothing", async () => {
    const recorded = await threadReceivedAt(NOW - 30 * HOUR);
    const woke = await threadReceivedAt(NOW - 30 * HOUR);
    const decided = await threadReceivedAt(NOW - 30 * HOUR);
    const fresh = await threadReceivedAt(NOW - 30 * HOUR);
    const readings = await Promise.all([recorded, woke, decided, fresh].map(candidateFor));
    const found = readings.map((candidate) => ({ candidate, spell: staleSpellOf(candidate, NOW, 24 * HOUR)! }));
    // As another instance would: it records the first thread's spell from the same reading.
    expect((await inSqlTransaction((sql) => recordStaleSpellsTogether(sql, found.slice(0, 1), at(NOW), 24))).map((spell) => spell.threadKey)).toEqual([recorded]);
    await recordSessionEvent(woke, { kind: "heartbeat", at: at(NOW - 10 * 60_000).toISOString() }, { actor: "token:test", now: at(NOW) });
    const packet = (await (await database()).thread.findUniqueOrThrow({ where: { key: decided } })).activeVersionId!;
    await decide(person, decided, { kind: "approved", packet_id: packet, base_revision: 0 });
    await scheduleWriteBack([decided]);
    // From the readings made before all that: only the untouched thread's spell is recorded.
    const spells = await inSqlTransaction((sql) => recordStaleSpellsTogether(sql, found, at(NOW), 24));
    expect(spells.map((spell) => spell.threadKey)).toEqual([fresh]);
    expect(await staleEvents(recorded)).toHaveLength(1);
    expect(await staleEvents(woke)).toEqual([]);
    expect(await staleEvents(decided)).toEqual([]);
    expect(await staleEvents(fresh)).toEqual([{ actor: "watchdog", versionId: found[3]!.spell.versionId, data: { last_activity: at(NOW - 30 * HOUR).toISOString(), stale_hours: 24 } }]);
  });

  it("skips archived threads, and counts threads that need a person like the board's stale flag does", async () => {
    const archived = await threadReceivedAt(NOW - 30 * HOUR, "archived", { status: "archived" });
    expect(await checkFor(archived, NOW)).toEqual([]);
    const needsYou = await threadReceivedAt(NOW - 30 * HOUR, "questions", { questions_for_human: ["Which region?"] });
    expect(await placed(needsYou, NOW)).toEqual({ column: "needs_you", flags: expect.arrayContaining(["open_questions", "stale"]) as unknown });
    expect(await checkFor(needsYou, NOW)).toHaveLength(1);
  });
});
