import { beforeAll, describe, expect, it } from "vitest";
import type { Person } from "../../auth/roles";
import { createFirstAdmin } from "../../auth/users";
import { loadBoard } from "../../board/board";
import type { Column } from "../../board/columns";
import { database } from "../../db/client";
import { ingestPacket } from "../../ingest/ingest";
import { riskFingerprint } from "../../contract/fingerprint";
import { parseInput } from "../../core/parse-input";
import { expectBatonError } from "@/testing/expect-baton-error";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { threadFiltersSchema } from "../threads/filters";
import type { RiskListDto } from "./dto";
import { listRisks } from "./queries";
import { triageRequestSchema, triageRisks, type TriageRequest } from "./triage";

freshDatabaseForThisFile();

let person: Person;
beforeAll(async () => {
  person = await createFirstAdmin({ username: "tess", password: "a long enough password" });
});

let serial = 0;
/** A thread key and a word no other test uses (risks are grouped across threads by their words). */
function unique(name: string): { thread: string; word: string } {
  serial++;
  return { thread: `risks/${name}-${serial}`, word: `${name}${serial}` };
}

const MINUTE = 60_000;
/** Arrival times: an hour ago, then a minute apart, so that each packet is newer than the last. */
let clock = Date.now() - 60 * MINUTE;
const nextArrival = () => new Date((clock += MINUTE));

type RiskInput = { severity: string; detail: string };

/** Stores a clean packet (nothing else needs a person) carrying `risks`; returns its packet id. */
async function ingest(thread: string, risks: RiskInput[], receivedAt = nextArrival()): Promise<string> {
  const body = { thread, summary: `work on ${thread} at ${receivedAt.toISOString()}`, next_action: "continue", open_risks: risks };
  const result = await ingestPacket(body, { kind: "http", actor: "test" }, receivedAt);
  expect(result.duplicate).toBe(false);
  return result.packet_id;
}

const triage = (action: TriageRequest["action"], targets: { thread: string; detail: string }[], snoozedUntil?: Date | null) =>
  triageRisks(person, {
    action,
    targets: targets.map((target) => ({ thread_key: target.thread, fingerprint: riskFingerprint(target.detail) })),
    ...(snoozedUntil === undefined ? {} : { snoozed_until: snoozedUntil }),
  });

const groupOf = (list: RiskListDto, detail: string) => list.groups.find((group) => group.fingerprint === riskFingerprint(detail));

async function columnOf(thread: string, now = Date.now()): Promise<{ column: Column; reason: string }> {
  const board = await loadBoard(threadFiltersSchema.parse({ q: thread }), { now });
  const cards = board.columns.flatMap((column) => column.cards).filter((card) => card.key === thread);
  expect(cards).toHaveLength(1);
  return { column: cards[0]!.column, reason: cards[0]!.column_reason };
}

async function riskEvents(thread: string) {
  const rows = await (await database()).ledgerEvent.findMany({ where: { threadKey: thread, kind: { startsWith: "risk_" } }, orderBy: { seq: "asc" } });
  return rows.map((row) => ({ kind: row.kind, actor: row.actor, versionId: row.versionId, data: JSON.parse(row.data) as Record<string, unknown> }));
}

describe("listRisks", () => {
  it("groups one risk across versions and threads, with each thread's first and last sighting and the occurrences", async () => {
    const a = unique("group-a");
    const b = unique("group-b");
    const shared = (minutes: number) => `${a.word}: the cache may serve stale rows for ${minutes} minutes`;
    const dropped = `${a.word}: only in the first version`;
    const aFirst = nextArrival();
    await ingest(a.thread, [{ severity: "medium", detail: shared(5) }, { severity: "low", detail: dropped }], aFirst);
    const bOnly = nextArrival();
    const bPacket = await ingest(b.thread, [{ severity: "high", detail: shared(3) }], bOnly);
    const aLast = nextArrival();
    const aPacket = await ingest(a.thread, [{ severity: "low", detail: shared(10) }, { severity: "critical", detail: `${a.word}: prod credentials in the log` }], aLast);

    const list = await listRisks({ q: a.word });
    // The critical risk first, then the shared one at its highest severity (high); the dropped risk is gone.
    expect(list.groups.map((group) => [group.severity, group.detail])).toEqual([
      ["critical", `${a.word}: prod credentials in the log`],
      ["high", shared(3)],
    ]);
    const group = groupOf(list, shared(1))!;
    expect(group).toMatchObject({
      regressed: false,
      needs_attention: true,
      states: ["open"],
      first_seen: aFirst.toISOString(),
      last_seen: aLast.toISOString(),
      occurrences: 3,
    });
    expect(group.threads).toEqual([
      expect.objectContaining({ thread_key: b.thread, packet_id: bPacket, severity: "high", state: "open", first_seen: bOnly.toISOString(), last_seen: bOnly.toISOString(), occurrences: 1 }),
      expect.objectContaining({ thread_key: a.thread, packet_id: aPacket, severity: "low", detail: shared(10), first_seen: aFirst.toISOString(), last_seen: aLast.toISOString(), occurrences: 2 }),
    ]);
    expect(groupOf(await listRisks({ state: "all" }), dropped)).toBeUndefined();
  });

  it("leaves out archived threads, and refuses to triage their risks", async () => {
    const { thread, word } = unique("archived");
    const detail = `${word}: left behind`;
    await ingest(thread, [{ severity: "critical", detail }]);
    expect(groupOf(await listRisks({ q: word }), detail)).toBeDefined();
    const archived = await ingestPacket({ thread, status: "archived", summary: "done", next_action: "none", open_risks: [{ severity: "critical", detail }] }, { kind: "http", actor: "test" }, nextArrival());
    expect(archived.active).toBe(true);
    expect(groupOf(await listRisks({ q: word, state: "all" }), detail)).toBeUndefined();
    await expectBatonError(triage("acknowledged", [{ thread, detail }]), "invalid_request");
  });

  it("counts a risk repeated in one packet once, at its highest severity", async () => {
    const { thread, word } = unique("repeat");
    await ingest(thread, [{ severity: "low", detail: `${word} repeats` }, { severity: "high", detail: `${word}  REPEATS` }]);
    const group = groupOf(await listRisks({ q: word }), `${word} repeats`)!;
    expect(group.threads).toHaveLength(1);
    expect(group).toMatchObject({ severity: "high", occurrences: 1 });
  });
});

describe("triage", () => {
  it("carries an acknowledgement over to a newer version by fingerprint, and records who did it", async () => {
    const { thread, word } = unique("carry");
    const detail = `${word}: retries hide the 500s`;
    await ingest(thread, [{ severity: "critical", detail }]);
    expect((await columnOf(thread)).column).toBe("needs_you");

    const result = await triage("acknowledged", [{ thread, detail }]);
    expect(result.triaged).toEqual([expect.objectContaining({ thread_key: thread, state: "acknowledged", triage: expect.objectContaining({ state: "acknowledged", by: "tess", severity_at_triage: "critical" }) })]);
    expect((await columnOf(thread)).column).toBe("ready");

    const newer = await ingest(thread, [{ severity: "critical", detail: `${word}:  Retries hide the 500s` }]);
    const group = groupOf(await listRisks({ q: word }), detail)!;
    expect(group.threads).toEqual([expect.objectContaining({ packet_id: newer, state: "acknowledged", needs_attention: false, occurrences: 2 })]);
    expect(group.states).toEqual(["acknowledged"]);
    expect((await columnOf(thread)).column).toBe("ready");
  });

  it("keeps a card in Needs you while one of its critical risks is not acknowledged", async () => {
    const { thread, word } = unique("two-critical");
    await ingest(thread, [{ severity: "critical", detail: `${word} one` }, { severity: "high", detail: `${word} two` }]);
    expect((await columnOf(thread)).reason).toBe("needs a person: 2 critical/high risk(s) not acknowledged");
    await triage("acknowledged", [{ thread, detail: `${word} one` }]);
    expect(await columnOf(thread)).toEqual({ column: "needs_you", reason: "needs a person: 1 critical/high risk(s) not acknowledged" });
  });

  it("marks a resolved risk that a newer packet carries again as regressed: on top of the list, and the card back in Needs you even for a low risk", async () => {
    const { thread, word } = unique("regress");
    const detail = `${word}: the flaky migration test`;
    await ingest(thread, [{ severity: "low", detail }, { severity: "medium", detail: `${word}: another` }]);
    await triage("resolved", [{ thread, detail }]);

    // Resolved risks are hidden unless asked for; the card needs nobody.
    const hiding = await listRisks({ q: word });
    expect(groupOf(hiding, detail)).toBeUndefined();
    expect(hiding.hidden).toBe(1);
    expect(groupOf(await listRisks({ q: word, state: "all" }), detail)!.states).toEqual(["resolved"]);
    expect((await columnOf(thread)).column).toBe("ready");

    // A newer packet of the same thread carries it again (it arrives after the resolution).
    const later = new Date(Date.now() + MINUTE);
    await ingest(thread, [{ severity: "low", detail }], later);
    const all = await listRisks({}, new Date(later.getTime() + 1));
    expect(all.groups[0]).toMatchObject({ fingerprint: riskFingerprint(detail), regressed: true, severity: "low", states: ["regressed"], needs_attention: true });
    expect(await columnOf(thread, later.getTime() + 1)).toEqual({ column: "needs_you", reason: "needs a person: 1 resolved risk(s) came back" });

    // Acknowledging the regression settles it.
    const result = await triage("acknowledged", [{ thread, detail }]);
    expect(result.triaged[0]!.state).toBe("acknowledged");
    expect((await columnOf(thread, later.getTime() + 1)).column).toBe("ready");
  });

  it("snoozes until a date: hidden and needing nobody until then, open again after", async () => {
    const { thread, word } = unique("snooze-date");
    const detail = `${word}: disk at 85%`;
    await ingest(thread, [{ severity: "critical", detail }]);
    const until = new Date(Date.now() + 2 * 24 * 60 * MINUTE);
    const result = await triage("snoozed", [{ thread, detail }], until);
    expect(result.triaged[0]).toMatchObject({ state: "snoozed", triage: { state: "snoozed", snoozed_until: until.toISOString() } });
    expect(groupOf(await listRisks({ q: word }), detail)).toBeUndefined();
    expect((await columnOf(thread)).column).toBe("ready");

    const after = new Date(until.getTime() + MINUTE);
    expect(groupOf(await listRisks({ q: word }, after), detail)!.states).toEqual(["open"]);
    expect((await columnOf(thread, after.getTime())).column).toBe("needs_you");
  });

  it("snoozes until the severity rises: a newer version at the same severity stays snoozed, a higher one reopens it", async () => {
    const { thread, word } = unique("snooze-rise");
    const detail = `${word}: the queue backs up at peak`;
    await ingest(thread, [{ severity: "medium", detail }]);
    expect((await triage("snoozed", [{ thread, detail }], null)).triaged[0]).toMatchObject({ state: "snoozed", triage: { snoozed_until: null, severity_at_triage: "medium" } });

    await ingest(thread, [{ severity: "warning", detail }]);
    expect(groupOf(await listRisks({ q: word, state: "all" }), detail)!.states).toEqual(["snoozed"]);

    await ingest(thread, [{ severity: "high", detail }]);
    const group = groupOf(await listRisks({ q: word }), detail)!;
    expect(group).toMatchObject({ severity: "high", states: ["open"], needs_attention: true });
    expect((await columnOf(thread)).column).toBe("needs_you");
  });

  it("takes a triage back with untriaged: the row goes, the risk is open again", async () => {
    const { thread, word } = unique("untriage");
    const detail = `${word}: pinned dependency`;
    await ingest(thread, [{ severity: "high", detail }]);
    await triage("acknowledged", [{ thread, detail }]);
    const result = await triage("untriaged", [{ thread, detail }]);
    expect(result.triaged[0]).toMatchObject({ state: "open", triage: null });
    expect(await (await database()).riskTriage.count({ where: { fingerprint: riskFingerprint(detail) } })).toBe(0);
    expect((await columnOf(thread)).column).toBe("needs_you");
  });

  it("records one ledger event per target, with who, the thread, the packet and the risk", async () => {
    const a = unique("ledger-a");
    const b = unique("ledger-b");
    const detail = `${a.word}: shared secret in env`;
    const aPacket = await ingest(a.thread, [{ severity: "high", detail }]);
    const bPacket = await ingest(b.thread, [{ severity: "critical", detail }]);
    const until = new Date(Date.now() + 24 * 60 * MINUTE);
    const result = await triage("snoozed", [{ thread: a.thread, detail }, { thread: b.thread, detail }, { thread: a.thread, detail }], until);
    expect(result.triaged.map((item) => item.thread_key)).toEqual([a.thread, b.thread]);
    const fingerprint = riskFingerprint(detail);
    expect(await riskEvents(a.thread)).toEqual([
      { kind: "risk_snoozed", actor: "tess", versionId: aPacket, data: { fingerprint, detail, severity: "high", snoozed_until: until.toISOString(), previous_state: "open" } },
    ]);
    expect(await riskEvents(b.thread)).toEqual([
      { kind: "risk_snoozed", actor: "tess", versionId: bPacket, data: { fingerprint, detail, severity: "critical", snoozed_until: until.toISOString(), previous_state: "open" } },
    ]);
    await triage("resolved", [{ thread: a.thread, detail }]);
    expect((await riskEvents(a.thread)).map((event) => [event.kind, event.data.previous_state, event.data.snoozed_until])).toEqual([
      ["risk_snoozed", "open", until.toISOString()],
      ["risk_resolved", "snoozed", null],
    ]);
  });
});

describe("triage validation", () => {
  const parse = (body: unknown) => {
    try {
      parseInput(triageRequestSchema, body, "triage");
      return null;
    } catch (error) {
      return (error as { details: { fields: { field: string; problem: string }[] } }).details.fields;
    }
  };
  const target = { thread_key: "t", fingerprint: "f" };

  it("names the field that is wrong", () => {
    expect(parse({ action: "ignored", targets: [target] })).toEqual([{ field: "action", problem: expect.stringContaining('"acknowledged"') }]);
    expect(parse({ action: "resolved", targets: [] })).toEqual([{ field: "targets", problem: "targets must name at least one risk" }]);
    expect(parse({ action: "resolved", targets: [{ thread_key: "", fingerprint: "f" }] })).toEqual([{ field: "targets.0.thread_key", problem: "thread_key must not be empty" }]);
    expect(parse({ action: "resolved", targets: [target], extra: 1 })?.[0]?.field).toBe("(body)");
    expect(parse({ action: "snoozed", targets: [target] })).toEqual([{ field: "snoozed_until", problem: expect.stringContaining("required") }]);
    expect(parse({ action: "snoozed", targets: [target], snoozed_until: "next week" })).toEqual([{ field: "snoozed_until", problem: expect.stringContaining("ISO-8601") }]);
    expect(parse({ action: "snoozed", targets: [target], snoozed_until: "2001-01-01" })).toEqual([{ field: "snoozed_until", problem: "snoozed_until must be in the future" }]);
    expect(parse({ action: "acknowledged", targets: [target], snoozed_until: "2999-01-01T00:00:00Z" })).toEqual([{ field: "snoozed_until", problem: expect.stringContaining("only") }]);
    expect(parse({ action: "snoozed", targets: [target], snoozed_until: "2999-01-01" })).toBeNull();
    expect(parse({ action: "snoozed", targets: [target], snoozed_until: null })).toBeNull();
    expect(parse({ action: "untriaged", targets: [target] })).toBeNull();
  });

  it("refuses a target the thread's active packet does not carry, naming it, and triages nothing", async () => {
    const { thread, word } = unique("missing");
    const detail = `${word}: real risk`;
    await ingest(thread, [{ severity: "critical", detail }]);
    const events = await (await database()).ledgerEvent.count();
    const error = await expectBatonError(
      triageRisks(person, {
        action: "acknowledged",
        targets: [
          { thread_key: thread, fingerprint: riskFingerprint(detail) },
          { thread_key: thread, fingerprint: "not-a-fingerprint" },
          { thread_key: "risks/no-such-thread", fingerprint: riskFingerprint(detail) },
        ],
      }),
      "invalid_request",
    );
    expect(error.status).toBe(400);
    expect(error.message).toContain(`"not-a-fingerprint" in thread "${thread}"`);
    expect(error.message).toContain('thread "risks/no-such-thread"');
    expect(error.details).toEqual({
      field: "targets",
      missing: [
        { thread_key: thread, fingerprint: "not-a-fingerprint" },
        { thread_key: "risks/no-such-thread", fingerprint: riskFingerprint(detail) },
      ],
    });
    expect(await (await database()).ledgerEvent.count()).toBe(events);
    expect(await (await database()).riskTriage.count({ where: { fingerprint: riskFingerprint(detail) } })).toBe(0);
    expect((await columnOf(thread)).column).toBe("needs_you");
  });
});
