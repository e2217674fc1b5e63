import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import * as threadHandoff from "@/app/api/v1/threads/[key]/handoff/route";
import { MAX_WAITS_PER_READER, readerChecksStatus, RECHECK_INTERVAL_MS } from "../auth/reader-checks";
import { withQuickRechecks } from "@/testing/reader-checks";
import type { Person } from "../auth/roles";
import { endSession, startSession } from "../auth/sessions";
import { createApiToken, revokeApiToken } from "../auth/tokens";
import { changeUser, createFirstAdmin, createUser } from "../auth/users";
import { database, inTransaction } from "../db/client";
import { BatonError } from "../core/errors";
import { ingestPacket } from "../ingest/ingest";
import { countStatements } from "@/testing/count-statements";
import { otherConnection, testsRunOnPostgresql } from "@/testing/postgresql";
import { FEED_POLL_INTERVAL_MS } from "../events/feed-shared";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { scheduleWriteBack } from "./writeback/write-human-section";
import { answer, decide } from "./actions";
import { humanRevisionOf, waitForHandoffChange, waitRegistryStatus, type WaitOutcome } from "./wait";

const temp = freshDatabaseForThisFile();

let person: Person;
beforeAll(async () => {
  const admin = await createFirstAdmin({ username: "the-admin", password: "a long enough password" });
  person = { id: admin.id, username: admin.username, role: admin.role };
});

let serial = 0;
const threadsUsed: string[] = [];
async function newThread(name: string, extra: Record<string, unknown> = {}): Promise<{ key: string; packetId: string }> {
  const key = `wait/${name}-${++serial}`;
  threadsUsed.push(key);
  const stored = await ingestPacket({ thread: key, summary: `work on ${key}`, next_action: "continue", ...extra }, { kind: "http", actor: "test" });
  return { key, packetId: stored.packet_id };
}
// Human writes queue a background write-back per thread; let those finish before the database goes.
afterAll(async () => {
  await scheduleWriteBack(threadsUsed);
});
afterEach(() => {
  vi.useRealTimers();
  expect(waitRegistryStatus()).toMatchObject({ waiters: 0, inWait: 0, threads: 0, subscribed: false });
  expect(readerChecksStatus()).toMatchObject({ readers: 0, streams: 0, waits: 0, checking: false });
});


/**
 * Waits (real time, at most 10 s) until `condition` holds. Unlike expect.poll and vi.waitFor,
 * it leaves a faked clock where it is (they move it by their interval at each try).
 */
async function until(condition: () => boolean): Promise<void> {
  for (const started = performance.now(); !condition(); await new Promise((resolve) => setTimeout(resolve, 10))) {
    if (performance.now() - started > 10_000) throw new Error(`still not true after 10 s: ${String(condition)}`);
  }
}

const settledWithin = async <T>(promise: Promise<T>, ms: number): Promise<T | "pending"> =>
  Promise.race([promise, new Promise<"pending">((resolve) => setTimeout(() => resolve("pending"), ms))]);

describe("waitForHandoffChange", () => {
  it("answers at once when the revision is past `after` or the active packet is another than `after_packet`", async () => {
    const { key, packetId } = await newThread("at-once");
    await decide(person, key, { kind: "approved", packet_id: packetId, base_revision: 0 });

    const passed = await waitForHandoffChange({ threadKey: key, after: 0, waitMs: 10_000 });
    expect(passed.changed).toBe(true);
    expect(humanRevisionOf(passed.handoff)).toBe(1);
    expect(passed.handoff.body.human).toMatchObject({ revision: 1, decision: { kind: "approved", by: "the-admin" } });

    const otherPacket = await waitForHandoffChange({ threadKey: key, after: 5, afterPacket: "pv_not_this_one", waitMs: 10_000 });
    expect(otherPacket).toMatchObject({ changed: true, handoff: { packetId } });

    // Without waiting it only compares.
    expect((await waitForHandoffChange({ threadKey: key, after: 1, afterPacket: packetId, waitMs: 0 })).changed).toBe(false);
    expect((await waitForHandoffChange({ threadKey: key, after: 0, waitMs: 0 })).changed).toBe(true);
  });

  it("is woken by a person's decision well within a second, with the decision in the packet", async () => {
    const { key, packetId } = await newThread("woken");
    const waiting = waitForHandoffChange({ threadKey: key, after: 0, afterPacket: packetId, waitMs: 30_000 });
    await until(() => waitRegistryStatus().inWait === 1);

    const started = performance.now();
    await decide(person, key, { kind: "intervened", packet_id: packetId, base_revision: 0, question: "Why the revert?" });
    const outcome = await waiting;
    const latencyMs = performance.now() - started;
    console.log(`waiting read woken ${latencyMs.toFixed(1)} ms after the decision was written`);
    expect(latencyMs).toBeLessThan(500);
    expect(outcome.changed).toBe(true);
    expect(outcome.handoff.body.human).toMatchObject({ revision: 1, decision: { kind: "intervened" }, questions: [{ id: "h1", text: "Why the revert?" }] });
  });

  it("ends with nothing changed when the wait runs out, leaving the registry empty", async () => {
    const { key, packetId } = await newThread("timeout");
    const started = performance.now();
    const outcome = await waitForHandoffChange({ threadKey: key, after: 0, waitMs: 300 });
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(outcome).toMatchObject({ changed: false, handoff: { packetId } });
    expect(humanRevisionOf(outcome.handoff)).toBe(0);
  });

  it("is woken by a newer packet on the thread (the packet seen first stands in for after_packet)", async () => {
    const { key } = await newThread("newer-packet");
    const waiting = waitForHandoffChange({ threadKey: key, after: 0, waitMs: 30_000 });
    // Past its first read (which saw the first packet), else that read could see the newer one.
    await until(() => waitRegistryStatus().inWait === 1);
    const newer = await ingestPacket({ thread: key, summary: "the next session's packet", next_action: "go on" }, { kind: "http", actor: "test" });
    const outcome = await waiting;
    expect(outcome).toMatchObject({ changed: true, handoff: { packetId: newer.packet_id } });
    expect(humanRevisionOf(outcome.handoff)).toBe(0);
  });

  it("refuses an unknown thread with not_found, and unregisters", async () => {
    const refused = await waitForHandoffChange({ threadKey: "wait/no-such-thread", after: 0, waitMs: 5_000 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(BatonError);
    expect((refused as BatonError).code).toBe("not_found");
  });

  it("unregisters a waiter whose client went away", async () => {
    const { key } = await newThread("aborted");
    const controller = new AbortController();
    const waiting = waitForHandoffChange({ threadKey: key, after: 0, waitMs: 30_000, signal: controller.signal });
    await until(() => waitRegistryStatus().inWait === 1);
    expect(waitRegistryStatus()).toMatchObject({ waiters: 1, threads: 1, subscribed: true });
    controller.abort();
    expect((await waiting).changed).toBe(false);
    expect(waitRegistryStatus()).toMatchObject({ waiters: 0, threads: 0, subscribed: false });
  });

  it("200 waiters cost no database statements while they wait, and one read per woken thread", async () => {
    const threads = await Promise.all(Array.from({ length: 4 }, (_, index) => newThread(`many-${index}`, { questions_for_human: ["Which region?"] })));
    const outcomes: Promise<WaitOutcome>[] = [];
    for (let index = 0; index < 200; index++) {
      const { key, packetId } = threads[index % threads.length]!;
      outcomes.push(waitForHandoffChange({ threadKey: key, after: 0, afterPacket: packetId, waitMs: 60_000 }));
    }
    // Every first read is done (each is one handoff read).
    await until(() => waitRegistryStatus().inWait === 200);
    expect(waitRegistryStatus()).toMatchObject({ waiters: 200, threads: 4 });

    const counter = countStatements();
    let during: number;
    try {
      // Real time on purpose: it shows that nothing runs per waiter on any timer (their own timeouts are real setTimeouts).
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      during = counter.count();
    } finally {
      counter.stop();
    }
    // The ledger feed's once-a-second MAX(seq) is all the database sees: 2 or 3 in 2.5 s, for 200 waiters.
    console.log(`statements during a 2.5 s wait of 200 waiters: ${during}`);
    expect(during).toBeLessThanOrEqual(4);

    const [first] = threads;
    const readsBefore = waitRegistryStatus().wakeReads;
    await answer(person, first!.key, { packet_id: first!.packetId, base_revision: 0, answers: [{ question_id: "q0", answer: "eu-west" }] });
    const woken = await Promise.all(outcomes.filter((_, index) => index % threads.length === 0));
    expect(woken).toHaveLength(50);
    for (const outcome of woken) {
      expect(outcome.changed).toBe(true);
      expect(outcome.handoff.body.human).toMatchObject({ revision: 1, answers: [{ question_id: "q0", answer: "eu-west" }] });
    }
    // One read woke all 50 waiters of that thread; the other threads' waiters were not read for.
    expect(waitRegistryStatus().wakeReads - readsBefore).toBe(1);
    expect(waitRegistryStatus()).toMatchObject({ waiters: 150, threads: 3 });

    // The rest: a packet on each remaining thread.
    for (const { key } of threads.slice(1)) await ingestPacket({ thread: key, summary: "newer", next_action: "go" }, { kind: "http", actor: "test" });
    for (const outcome of await Promise.all(outcomes)) expect(outcome.changed).toBe(true);
  }, 30_000);

  it("is woken by another process's write, through the ledger feed's one poll", async () => {
    // SQLite's feed checks on a setInterval: faked there, and moved by its interval (PostgreSQL's is woken by NOTIFY).
    const polled = !testsRunOnPostgresql();
    if (polled) vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const { key, packetId } = await newThread("other-process");
    const waiting = waitForHandoffChange({ threadKey: key, after: 0, afterPacket: packetId, waitMs: 30_000 });
    // Past its first read, so that only a wake can answer it.
    await until(() => waitRegistryStatus().inWait === 1);

    // What another Baton process on the same database writes: a revision and its ledger event, no announcement here.
    const other = await otherConnection(temp().url);
    const at = new Date();
    const section = { revision: 1, updated_at: at.toISOString(), decision: { kind: "approved", by: "elsewhere", at: at.toISOString() }, answers: [], questions: [] };
    const thread = (await (await database()).thread.findUniqueOrThrow({ where: { key } })).id;
    const started = performance.now();
    await other.transaction([
      [
        `INSERT INTO "HumanRevision" ("id", "versionId", "threadId", "revision", "action", "section", "userId", "at") VALUES ($1, $2, $3, 1, 'approved', $4, $5, $6)`,
        [`hr_other_${serial}`, packetId, thread, JSON.stringify(section), person.id, at],
      ],
      [
        `INSERT INTO "LedgerEvent" ("at", "kind", "threadKey", "versionId", "actor", "data") VALUES ($1, 'human_approved', $2, $3, 'elsewhere', $4)`,
        [at, key, packetId, JSON.stringify({ revision: 1, note: null })],
      ],
    ]);
    await other.close();
    if (polled) {
      expect(await settledWithin(waiting, 100), "woken before the feed's check").toBe("pending");
      vi.advanceTimersByTime(FEED_POLL_INTERVAL_MS);
    }

    const outcome = await waiting;
    const latencyMs = performance.now() - started;
    console.log(`woken ${latencyMs.toFixed(0)} ms after another process's write`);
    expect(latencyMs).toBeLessThan(2_500);
    expect(outcome.handoff.body.human).toMatchObject({ revision: 1, decision: { kind: "approved", by: "elsewhere" } });
  });
});

/** Within this of losing its access, a reader's pending wait has ended (the finding's bound). */
const CUT_OFF_MS = 5_000;

/** The waiting read as an HTTP client makes it: GET /api/v1/threads/{key}/handoff?after=0&wait=60. */
function waitingRead(key: string, headers: Record<string, string>, signal?: AbortSignal, query = "after=0&wait=60"): Promise<Response> {
  const request = new Request(`http://127.0.0.1:3000/api/v1/threads/${encodeURIComponent(key)}/handoff?${query}`, { headers, signal });
  return threadHandoff.GET(request, { params: Promise.resolve({ key }) });
}
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const cookie = (secret: string) => ({ cookie: `baton_session=${secret}` });

async function errorOf(response: Response) {
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  return ((await response.json()) as { error: { code: string; message: string; details: unknown } }).error;
}

/** Starts a waiting read and hands back its answer-to-be once it waits (registered and past its first read). */
async function waiting(key: string, headers: Record<string, string>, signal?: AbortSignal): Promise<{ answer: Promise<Response> }> {
  const before = waitRegistryStatus().waiters;
  const answer = waitingRead(key, headers, signal);
  await expect.poll(() => waitRegistryStatus().waiters).toBe(before + 1);
  expect(await settledWithin(answer, 100)).toBe("pending");
  // Wrapped: an async function would otherwise wait for the answer itself.
  return { answer };
}

/** The wait's answer, failing if it has not come `CUT_OFF_MS` after `since`. */
async function answeredWithin({ answer }: { answer: Promise<Response> }, since: number): Promise<Response> {
  const answered = await settledWithin(answer, CUT_OFF_MS);
  expect(answered, `still waiting ${CUT_OFF_MS} ms after the reader lost its access`).not.toBe("pending");
  expect(performance.now() - since).toBeLessThan(CUT_OFF_MS);
  return answered as Response;
}

/** The wait's answer after `loseAccess` ran, failing if it has not come `CUT_OFF_MS` after it began. */
async function answerOnceAccessLost(pending: { answer: Promise<Response> }, loseAccess: () => Promise<unknown>): Promise<Response> {
  const started = performance.now();
  await loseAccess();
  return answeredWithin(pending, started);
}

describe("the waiting read: re-checking who waits", () => {
  it("ends a token's wait with 401 within 5 s of the token's revocation, at the production interval", async () => {
    // The re-check runs on setInterval (faked: the test moves it by the production interval; the reads stay real).
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const { key } = await newThread("revoked-token");
    const { token, summary } = await createApiToken("waiting-agent", ["packets:read"]);
    const pending = { answer: waitingRead(key, bearer(token)) };
    await until(() => waitRegistryStatus().waiters === 1);
    expect(await settledWithin(pending.answer, 100)).toBe("pending");
    await revokeApiToken(summary.id);
    vi.advanceTimersByTime(RECHECK_INTERVAL_MS - 1);
    expect(await settledWithin(pending.answer, 100), "answered before the re-check").toBe("pending");
    const started = performance.now();
    vi.advanceTimersByTime(1);
    // Within CUT_OFF_MS of the revocation: the interval, then the re-check's reads (real time).
    expect(RECHECK_INTERVAL_MS).toBeLessThan(CUT_OFF_MS);
    const response = await answeredWithin(pending, started - RECHECK_INTERVAL_MS);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
    const error = await errorOf(response);
    expect(error.code).toBe("unauthenticated");
    expect(error.message).toMatch(/revoked/);
  });

  it("ends a session's wait with 401 when it signs out, and leaves another session's wait alone", () =>
    withQuickRechecks(async () => {
      const { key } = await newThread("signed-out");
      const leaving = await startSession(person, "password");
      const staying = await startSession(person, "password");
      const stayingAbort = new AbortController();
      const pending = await waiting(key, cookie(leaving.secret));
      const other = await waiting(key, cookie(staying.secret), stayingAbort.signal);
      const response = await answerOnceAccessLost(pending, () => endSession(leaving.secret));
      expect(response.status).toBe(401);
      expect((await errorOf(response)).message).toMatch(/session has ended/);

      expect(await settledWithin(other.answer, 200)).toBe("pending");
      stayingAbort.abort();
      expect((await other.answer).status).toBe(304);
    }));

  it("ends a disabled person's wait with 401", () =>
    withQuickRechecks(async () => {
      const { key } = await newThread("disabled");
      const viewer = await createUser(person, { username: "waiting-viewer", password: "a long enough password", role: "viewer" });
      const { secret } = await startSession({ id: viewer.id, username: viewer.username, role: viewer.role }, "password");
      const pending = await waiting(key, cookie(secret));
      const response = await answerOnceAccessLost(pending, () => changeUser(person, viewer.id, { disabled: true }));
      expect(response.status).toBe(401);
      expect((await errorOf(response)).message).toMatch(/disabled/);
    }));

  it("ends the wait of a token that lost packets:read with 403", () =>
    withQuickRechecks(async () => {
      const { key } = await newThread("scope-lost");
      const { token, summary } = await createApiToken("scope-lost", ["packets:read", "events:write"]);
      const pending = await waiting(key, bearer(token));
      // No endpoint changes a token's scopes; a database edit stands in for one that would.
      const response = await answerOnceAccessLost(pending, () =>
        inTransaction((tx) => tx.apiToken.update({ where: { id: summary.id }, data: { scopes: "events:write" } })),
      );
      expect(response.status).toBe(403);
      const error = await errorOf(response);
      expect(error.code).toBe("forbidden");
      expect(error.details).toMatchObject({ required_scope: "packets:read", token_scopes: ["events:write"] });
    }));

  it(`answers 429 past ${MAX_WAITS_PER_READER} waits of one token; another token still waits, and plain reads are not counted`, async () => {
    const { key } = await newThread("capped");
    const { token } = await createApiToken("many-waits", ["packets:read"]);
    const other = (await createApiToken("other-waiter", ["packets:read"])).token;
    const abort = new AbortController();
    const pending = Array.from({ length: MAX_WAITS_PER_READER }, () => waitingRead(key, bearer(token), abort.signal));
    await expect.poll(() => waitRegistryStatus().waiters).toBe(MAX_WAITS_PER_READER);

    const refused = await waitingRead(key, bearer(token));
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("5");
    const error = await errorOf(refused);
    expect(error.code).toBe("rate_limited");
    expect(error.message).toContain(`already holds ${MAX_WAITS_PER_READER} waiting reads`);

    pending.push(waitingRead(key, bearer(other), abort.signal));
    await expect.poll(() => waitRegistryStatus().waiters).toBe(MAX_WAITS_PER_READER + 1);
    expect(readerChecksStatus()).toMatchObject({ readers: 2, waits: MAX_WAITS_PER_READER + 1 });
    // A read that does not wait holds nothing.
    expect((await waitingRead(key, bearer(token), undefined, "after=0")).status).toBe(304);
    expect((await waitingRead(key, bearer(token), undefined, "")).status).toBe(200);

    abort.abort();
    for (const response of await Promise.all(pending)) expect(response.status).toBe(304);
  }, 30_000);
});
