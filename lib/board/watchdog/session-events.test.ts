import { beforeAll, describe, expect, it, vi } from "vitest";
import { fakeSecrets } from "@/testing/fake-secrets";
import { POST } from "@/app/api/v1/threads/[key]/events/route";
import { createApiToken } from "../../auth/tokens";
import { loadBoard } from "../board";
import { database, inTransaction } from "../../db/client";
import { testsRunOnPostgresql } from "@/testing/postgresql";
import { ingestPacket } from "../../ingest/ingest";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { threadFiltersSchema } from "../../views/threads/filters";
import { statementsOf } from "@/testing/count-statements";
import { HEARTBEAT_LEDGER_INTERVAL_MS, recordSessionEvent, SESSION_EVENT_MAX_FUTURE_MS, type SessionEventResultDto } from "./session-events";
import { sessionWriterStats } from "./session-writer";

freshDatabaseForThisFile();

let eventsToken: string;
let packetsToken: string;

beforeAll(async () => {
  eventsToken = (await createApiToken("agent-7", ["events:write"])).token;
  packetsToken = (await createApiToken("packets-only", ["packets:write", "packets:read"])).token;
});

let serial = 0;
/** A thread with one clean packet (Ready on the board), received ten minutes ago; returns its key. */
async function threadWithPacket(name: string, extra: Record<string, unknown> = {}): Promise<string> {
  const thread = `watchdog/${name}-${++serial}`;
  const receivedAt = new Date(Date.now() - 10 * 60_000);
  await ingestPacket({ thread, summary: `work on ${thread}`, next_action: "continue", ...extra }, { kind: "http", actor: "test" }, receivedAt);
  return thread;
}

function post(key: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  const request = new Request(`http://baton.test/api/v1/threads/${encodeURIComponent(key)}/events`, {
    method: "POST",
    headers: { authorization: `Bearer ${eventsToken}`, "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return POST(request, { params: Promise.resolve({ key }) });
}

async function expectAnswer(response: Response, status: number): Promise<SessionEventResultDto> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  return JSON.parse(text) as SessionEventResultDto;
}

async function expectError(response: Response, status: number, code: string) {
  const body = (await expectAnswer(response, status)) as unknown as { error: { code: string; message: string; details: unknown } };
  expect(body.error.code).toBe(code);
  return body.error;
}

async function columnOf(key: string): Promise<string | null> {
  const board = await loadBoard(threadFiltersSchema.parse({}));
  return board.columns.find((column) => column.cards.some((card) => card.key === key))?.id ?? null;
}

async function sessionEvents(key: string) {
  const rows = await (await database()).ledgerEvent.findMany({
    where: { threadKey: key, kind: { in: ["session_started", "heartbeat", "session_ended"] } },
    orderBy: { seq: "asc" },
  });
  return rows.map((row) => ({ kind: row.kind, actor: row.actor, at: row.at.toISOString(), data: JSON.parse(row.data) as unknown }));
}

async function lastSession(key: string) {
  const row = await (await database()).thread.findUniqueOrThrow({ where: { key }, select: { lastSessionKind: true, lastSessionAt: true } });
  return { kind: row.lastSessionKind, at: row.lastSessionAt?.toISOString() ?? null };
}

const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

describe("POST /api/v1/threads/{key}/events", () => {
  it("a heartbeat after the packet moves the card to Running; session_ended takes it out again", async () => {
    const key = await threadWithPacket("running");
    expect(await columnOf(key)).toBe("ready");

    const heartbeat = await expectAnswer(await post(key, { kind: "heartbeat", session_id: "s-1", note: "tests pass" }), 200);
    expect(heartbeat).toMatchObject({ thread_key: key, kind: "heartbeat", applied: true, recorded: true, column: "running" });
    expect(heartbeat.column_reason).toMatch(/heartbeat after the last packet/);
    expect(await columnOf(key)).toBe("running");
    expect(await lastSession(key)).toEqual({ kind: "heartbeat", at: heartbeat.at });

    const ended = await expectAnswer(await post(key, { kind: "session_ended", session_id: "s-1" }), 200);
    expect(ended).toMatchObject({ kind: "session_ended", applied: true, recorded: true, column: "ready" });
    expect(await columnOf(key)).toBe("ready");

    expect(await sessionEvents(key)).toEqual([
      { kind: "heartbeat", actor: "token:agent-7", at: heartbeat.at, data: { session_id: "s-1", note: "tests pass" } },
      { kind: "session_ended", actor: "token:agent-7", at: ended.at, data: { session_id: "s-1", note: null } },
    ]);
  });

  it("session_started moves the card to Running; a newer packet takes it out until the session reports again", async () => {
    const key = await threadWithPacket("started");
    expect((await expectAnswer(await post(key, { kind: "session_started" }), 200)).column).toBe("running");

    await ingestPacket({ thread: key, summary: "next session's packet", next_action: "continue" }, { kind: "http", actor: "test" });
    expect(await columnOf(key)).toBe("ready");
    // The report is recorded at once, whatever the minute: the board must hear that the card moved.
    expect(await expectAnswer(await post(key, { kind: "heartbeat" }), 200)).toMatchObject({ column: "running", recorded: true });
  });

  it("a report older than the stored one is recorded but changes nothing on the thread", async () => {
    const key = await threadWithPacket("older");
    const newer = await expectAnswer(await post(key, { kind: "session_started", at: ago(1_000) }), 200);
    const older = await expectAnswer(await post(key, { kind: "session_ended", at: ago(60_000) }), 200);
    expect(older).toMatchObject({ applied: false, recorded: true, column: "running" });
    expect(await lastSession(key)).toEqual({ kind: "session_started", at: newer.at });
    expect((await sessionEvents(key)).map((event) => event.kind)).toEqual(["session_started", "session_ended"]);
  });

  it("records a heartbeat event at most once a minute per thread, and updates the thread every time", async () => {
    const key = await threadWithPacket("heartbeats");
    const start = Date.now() - 4 * 60_000;
    const at = (offsetMs: number) => new Date(start + offsetMs).toISOString();
    const answers = [];
    for (const offset of [0, 10_000, 30_000, HEARTBEAT_LEDGER_INTERVAL_MS - 1, HEARTBEAT_LEDGER_INTERVAL_MS + 1_000]) {
      answers.push(await expectAnswer(await post(key, { kind: "heartbeat", at: at(offset) }), 200));
    }
    expect(answers.map((answer) => [answer.applied, answer.recorded])).toEqual([
      [true, true],
      [true, false],
      [true, false],
      [true, false],
      [true, true],
    ]);
    expect(await lastSession(key)).toEqual({ kind: "heartbeat", at: at(HEARTBEAT_LEDGER_INTERVAL_MS + 1_000) });
    expect((await sessionEvents(key)).map((event) => event.at)).toEqual([at(0), at(HEARTBEAT_LEDGER_INTERVAL_MS + 1_000)]);

    // Any other event in between makes the next heartbeat worth recording.
    await post(key, { kind: "session_ended", at: at(HEARTBEAT_LEDGER_INTERVAL_MS + 2_000) });
    expect((await expectAnswer(await post(key, { kind: "heartbeat", at: at(HEARTBEAT_LEDGER_INTERVAL_MS + 3_000) }), 200)).recorded).toBe(true);
  });

  it("answers 404 for a thread without a packet, saying to send one first, and writes nothing", async () => {
    const before = await (await database()).ledgerEvent.count();
    const error = await expectError(await post("watchdog/never-sent", { kind: "heartbeat" }), 404, "not_found");
    expect(error.message).toMatch(/first packet/);
    expect(await (await database()).ledgerEvent.count()).toBe(before);
  });

  it("answers 400 naming each bad field, and writes nothing", async () => {
    const key = await threadWithPacket("bad");
    const before = await (await database()).ledgerEvent.count();
    const fieldsOf = async (body: unknown) => {
      const error = await expectError(await post(key, body), 400, "invalid_request");
      return (error.details as { fields: { field: string }[] }).fields.map((field) => field.field);
    };
    expect(await fieldsOf({ kind: "lunch" })).toEqual(["kind"]);
    expect(await fieldsOf({})).toEqual(["kind"]);
    expect(await fieldsOf({ kind: "heartbeat", at: "yesterday", session_id: 7 })).toEqual(["session_id", "at"]);
    expect(await fieldsOf({ kind: "heartbeat", sessionId: "s-1" })).toEqual(["(body)"]);
    expect(await fieldsOf({ kind: "heartbeat", note: "x".repeat(2001) })).toEqual(["note"]);
    const future = new Date(Date.now() + SESSION_EVENT_MAX_FUTURE_MS + 60_000).toISOString();
    expect(await fieldsOf({ kind: "heartbeat", at: future })).toEqual(["at"]);
    await expectError(await post(key, "{not json"), 400, "invalid_json");
    await expectError(await post(key, { kind: "heartbeat" }, { "content-type": "text/plain" }), 415, "unsupported_media_type");
    expect(await (await database()).ledgerEvent.count()).toBe(before);
    expect(await lastSession(key)).toEqual({ kind: null, at: null });
  });

  it("redacts secrets in a report's note and session id before they reach the ledger", async () => {
    const key = await threadWithPacket("secrets");
    const secrets = fakeSecrets(3);
    for (const [index, secret] of secrets.entries()) {
      const note = `session note ${index}: ${secret.text}`;
      // A session id is one line of at most 200 characters: the secret in its usual context when that fits.
      const line = secret.text.replace(/\s+/g, " ");
      const sessionId = line.length <= 190 ? `s-${index} ${line}` : `s-${index}`;
      await expectAnswer(await post(key, { kind: index % 2 ? "session_started" : "session_ended", session_id: sessionId, note }), 200);
    }
    const stored = JSON.stringify(await sessionEvents(key));
    const leaked = secrets.filter((secret) => stored.includes(secret.secret));
    expect(leaked.map((secret) => secret.kind)).toEqual([]);
    expect(stored).toContain("[redacted:");
  });

  it("refuses a session id with invisible or bidirectional characters", async () => {
    const key = await threadWithPacket("invisible-session");
    await expectError(await post(key, { kind: "heartbeat", session_id: "s-1\u202E" }), 400, "invalid_request");
  });

  it("accepts a report a little ahead of Baton's clock", async () => {
    const key = await threadWithPacket("skew");
    const at = new Date(Date.now() + SESSION_EVENT_MAX_FUTURE_MS - 60_000).toISOString();
    expect(await expectAnswer(await post(key, { kind: "heartbeat", at }), 200)).toMatchObject({ at, applied: true, column: "running" });
  });

  it("needs a token with events:write", async () => {
    const key = await threadWithPacket("auth");
    await expectError(await post(key, { kind: "heartbeat" }, { authorization: "" }), 401, "unauthenticated");
    await expectError(await post(key, { kind: "heartbeat" }, { authorization: `Bearer ${packetsToken}` }), 403, "forbidden");
    expect(await sessionEvents(key)).toEqual([]);
  });

  it("answers column null for an archived thread", async () => {
    const key = await threadWithPacket("archived", { status: "archived" });
    expect(await expectAnswer(await post(key, { kind: "heartbeat" }), 200)).toMatchObject({ applied: true, recorded: true, column: null, column_reason: null });
  });
});

describe("the answer's column", () => {
  /** The card as the board places it: column and reason. */
  async function placed(key: string) {
    const board = await loadBoard(threadFiltersSchema.parse({}));
    const card = board.columns.flatMap((column) => column.cards).find((candidate) => candidate.key === key);
    return { column: card?.column ?? null, column_reason: card?.column_reason ?? null };
  }

  it("is the board's placement, whether the session is at work or not", async () => {
    const critical = { open_risks: [{ severity: "critical", detail: "drops the users table" }] };
    const cases: { name: string; extra?: Record<string, unknown>; reports: Record<string, unknown>[]; column: string }[] = [
      { name: "heartbeat", reports: [{ kind: "heartbeat" }], column: "running" },
      { name: "critical-then-heartbeat", extra: critical, reports: [{ kind: "heartbeat" }], column: "running" },
      { name: "critical-then-ended", extra: critical, reports: [{ kind: "session_started" }, { kind: "session_ended" }], column: "needs_you" },
      // Sent before the packet arrived (ten minutes ago): the session is not at work on it.
      { name: "heartbeat-before-packet", extra: critical, reports: [{ kind: "heartbeat", at: ago(15 * 60_000) }], column: "needs_you" },
      // An older report changes nothing; the later one the thread holds still places it.
      { name: "older-report", reports: [{ kind: "heartbeat" }, { kind: "session_ended", at: ago(60_000) }], column: "running" },
      { name: "quiet-heartbeat", reports: [{ kind: "heartbeat" }, { kind: "heartbeat" }], column: "running" },
    ];
    for (const { name, extra, reports, column } of cases) {
      const key = await threadWithPacket(name, extra);
      let answer!: SessionEventResultDto;
      for (const report of reports) answer = await expectAnswer(await post(key, report), 200);
      expect({ name, column: answer.column, column_reason: answer.column_reason }).toEqual({ name, ...(await placed(key)) });
      expect({ name, column: answer.column }).toEqual({ name, column });
    }
  });
});

describe("report times", () => {
  it("refuses a report from more than half an hour ago (the ledger's time order must hold)", async () => {
    const key = await threadWithPacket("too-old");
    const answer = await post(key, { kind: "heartbeat", at: new Date(Date.now() - 31 * 60_000).toISOString() });
    expect(answer.status).toBe(400);
    expect(JSON.stringify(await answer.json())).toMatch(/at is more than 30 minutes before/);
  });
});

/** Another writer holds the turn (an ingest commit taking long) until `release()`, which resolves once it has let go. */
async function holdWritersTurn(): Promise<{ release: () => Promise<void> }> {
  let letGo!: () => void;
  const held = new Promise<void>((resolve) => (letGo = resolve));
  let holding!: () => void;
  const holds = new Promise<void>((resolve) => (holding = resolve));
  const writer = inTransaction(async () => {
    holding();
    await held;
  });
  await holds;
  return {
    release: () => {
      letGo();
      return writer;
    },
  };
}

describe("heartbeats and the writers' turn (PostgreSQL's advisory lock)", () => {
  it.skipIf(!testsRunOnPostgresql())("a heartbeat that records nothing does not wait for a writer; one that records an event does", async () => {
    const key = await threadWithPacket("writers-turn");
    await expectAnswer(await post(key, { kind: "heartbeat" }), 200);
    const turn = await holdWritersTurn();
    const started = post(key, { kind: "session_started", session_id: "s-2" });
    let startedDone = false;
    void started.then(() => (startedDone = true));
    const quiet = await expectAnswer(await post(key, { kind: "heartbeat", session_id: "s-2", note: "still going" }), 200);
    expect([quiet.applied, quiet.recorded]).toEqual([true, false]);
    expect(startedDone, "session_started waits for the writer's turn").toBe(false);
    await turn.release();
    expect((await expectAnswer(await started, 200)).recorded).toBe(true);
  });
});

describe("a quiet heartbeat (one that records no ledger event)", () => {
  it("is one statement on PostgreSQL: the thread's checks, the minute's rule and the update together", async () => {
    const key = await threadWithPacket("one-statement");
    expect((await expectAnswer(await post(key, { kind: "heartbeat", at: ago(2_000) }), 200)).recorded).toBe(true);
    let answer!: SessionEventResultDto;
    const statements = await statementsOf(async () => (answer = await recordSessionEvent(key, { kind: "heartbeat", at: ago(1_000) }, { actor: "agent-7" })));
    expect(answer).toMatchObject({ applied: true, recorded: false, column: "running" });
    expect(await lastSession(key)).toEqual({ kind: "heartbeat", at: answer.at });
    // SQLite keeps three in-process statements (the latest event, then the thread and its update) in a transaction.
    expect(statements).toBe(testsRunOnPostgresql() ? 1 : 5);
    // Older than the stored report: not applied, and the answer still places the card.
    const older = await recordSessionEvent(key, { kind: "heartbeat", at: ago(3_000) }, { actor: "agent-7" });
    expect(older).toMatchObject({ applied: false, recorded: false, column: "running" });
    expect(await lastSession(key)).toEqual({ kind: "heartbeat", at: answer.at });
  });

  it("from a token of another project is refused before anything is written", async () => {
    const key = await threadWithPacket("bound", { project: "beta" });
    const recorded = await expectAnswer(await post(key, { kind: "heartbeat", at: ago(2_000) }), 200);
    expect(recorded.recorded).toBe(true);
    await expect(recordSessionEvent(key, { kind: "heartbeat", at: ago(1_000) }, { actor: "agent-7", project: "alpha" })).rejects.toMatchObject({
      code: "forbidden",
      details: { thread_key: key, thread_project: "beta", token_project: "alpha" },
    });
    expect(await lastSession(key)).toEqual({ kind: "heartbeat", at: recorded.at });
    const own = await recordSessionEvent(key, { kind: "heartbeat", at: ago(1_000) }, { actor: "agent-7", project: "beta" });
    expect(own).toMatchObject({ applied: true, recorded: false });
    const unbound = await threadWithPacket("no-project");
    await post(unbound, { kind: "heartbeat", at: ago(2_000) });
    await expect(recordSessionEvent(unbound, { kind: "heartbeat" }, { actor: "agent-7", project: "beta" })).rejects.toMatchObject({ code: "forbidden" });
  });

  it("on a thread without a packet is the same 404", async () => {
    await expect(recordSessionEvent("watchdog/no-such-thread", { kind: "heartbeat" }, { actor: "agent-7" })).rejects.toMatchObject({
      code: "not_found",
      message: expect.stringMatching(/first packet/),
    });
  });
});

describe("a recorded report (one statement in the writers' turn on PostgreSQL)", () => {
  it("from a token of another project, or on a thread without a packet, writes neither the thread nor the ledger", async () => {
    const key = await threadWithPacket("bound-recorded", { project: "beta" });
    const before = { session: await lastSession(key), events: await sessionEvents(key) };
    await expect(recordSessionEvent(key, { kind: "session_started", session_id: "s-9" }, { actor: "agent-7", project: "alpha" })).rejects.toMatchObject({
      code: "forbidden",
      details: { thread_key: key, thread_project: "beta", token_project: "alpha" },
    });
    expect({ session: await lastSession(key), events: await sessionEvents(key) }).toEqual(before);
    await expect(recordSessionEvent("watchdog/no-such-thread", { kind: "session_ended" }, { actor: "agent-7" })).rejects.toMatchObject({ code: "not_found" });
    expect(await (await database()).ledgerEvent.count({ where: { threadKey: "watchdog/no-such-thread" } })).toBe(0);
    const own = await recordSessionEvent(key, { kind: "session_started", session_id: "s-9", note: "go" }, { actor: "agent-7", project: "beta" });
    expect(own).toMatchObject({ applied: true, recorded: true, column: "running" });
    expect((await sessionEvents(key)).slice(-1)).toEqual([{ kind: "session_started", actor: "agent-7", at: own.at, data: { session_id: "s-9", note: "go" } }]);
  });
});

describe("reports that arrive while the writers' turn is taken on PostgreSQL (decision 098)", () => {
  it.skipIf(!testsRunOnPostgresql())("are written together in one transaction, in arrival order; a refused one is answered alone", async () => {
    const keys = await Promise.all([1, 2, 3, 4].map((n) => threadWithPacket(`grouped-${n}`)));
    const twice = keys[0]!;
    const turn = await holdWritersTurn();
    const before = sessionWriterStats();
    // The first report's transaction waits for the turn; the others queue behind it.
    const first = recordSessionEvent(twice, { kind: "session_started", session_id: "s-1" }, { actor: "agent-7" });
    const queued = [
      recordSessionEvent(keys[1]!, { kind: "session_started", session_id: "s-2" }, { actor: "agent-7" }),
      recordSessionEvent("watchdog/no-such-thread", { kind: "session_started" }, { actor: "agent-7" }),
      recordSessionEvent(twice, { kind: "session_ended", session_id: "s-1" }, { actor: "agent-7" }),
      ...keys.slice(2).map((key) => recordSessionEvent(key, { kind: "heartbeat", session_id: "s-3" }, { actor: "agent-7" })),
    ];
    const settled = Promise.allSettled([first, ...queued]);
    // Each report reads before it asks for the turn; the turn is given back once all five wait behind the first.
    await vi.waitFor(() => expect(sessionWriterStats().waiting).toBe(queued.length), { timeout: 5000 });
    await turn.release();
    const [started, second, refused, ended, ...beats] = await settled;
    expect(refused).toMatchObject({ status: "rejected", reason: { code: "not_found" } });
    for (const answer of [started, second, ended, ...beats]) expect(answer).toMatchObject({ status: "fulfilled", value: { applied: true, recorded: true } });
    expect(sessionWriterStats()).toEqual({ groups: before.groups + 2, reports: before.reports + 6, waiting: 0 });
    // The same thread twice in one group: each report sees the one before it, as in transactions of their own.
    expect((await sessionEvents(twice)).map((event) => event.kind)).toEqual(["session_started", "session_ended"]);
    expect(await columnOf(twice)).not.toBe("running");
    for (const key of keys.slice(1)) expect(await columnOf(key)).toBe("running");
  });
});
