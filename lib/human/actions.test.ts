import { describe, expect, it } from "vitest";
import type { Person } from "../auth/roles";
import { loadBoard } from "../board/board";
import { database, inTransaction, sqlExecutor } from "../db/client";
import { BatonError } from "../core/errors";
import { Prisma } from "../generated/prisma/client";
import { ingestPacket } from "../ingest/ingest";
import { expectBatonError } from "@/testing/expect-baton-error";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { humanWritesSetup } from "@/testing/human-writes";
import { threadFiltersSchema, threadListQuerySchema } from "../views/threads/filters";
import { getThreadDetail } from "../views/threads/queries";
import { getMergedHandoff } from "../views/threads/packet-reads";
import { listThreads } from "../views/threads/flagged";
import {
  answer,
  answerShared,
  answersRequestSchema,
  decide,
  decisionRequestSchema,
  sharedAnswerRequestSchema,
  type HumanState,
} from "./actions";
import { emptyHumanSection } from "./section";

freshDatabaseForThisFile();

let operator: Person;
let colleague: Person;
const threadsUsed = humanWritesSetup((people) => ({ operator, colleague } = people));

let serial = 0;
/** A thread key no other test uses. */
function uniqueThread(name: string): string {
  const thread = `human/${name}-${++serial}`;
  threadsUsed.push(thread);
  return thread;
}

const QUESTIONS = [
  "Which database should the cache use?",
  { id: "q-dlq", question: "May I add the queue emulator to docker-compose.yml?", options: ["yes", "no"], blocking: true },
];

/** Ingests a packet on `thread` with two questions for a person (override with `extra`); returns its packet id. */
async function ingest(thread: string, extra: Record<string, unknown> = {}): Promise<string> {
  const body = { thread, summary: `work on ${thread}`, next_action: "continue", questions_for_human: QUESTIONS, ...extra };
  const result = await ingestPacket(body, { kind: "http", actor: "test" });
  expect(result.thread_key).toBe(thread);
  return result.packet_id;
}

const approve = (thread: string, packetId: string, baseRevision = 0, person = operator) =>
  decide(person, thread, { kind: "approved", packet_id: packetId, base_revision: baseRevision });

const intervene = (thread: string, packetId: string, baseRevision: number, question: string, blocking?: boolean) =>
  decide(operator, thread, { kind: "intervened", packet_id: packetId, base_revision: baseRevision, question, ...(blocking === undefined ? {} : { blocking }) });

async function counts() {
  const db = await database();
  return { revisions: await db.humanRevision.count(), events: await db.ledgerEvent.count() };
}

/** The human_* ledger events of a thread, oldest first, with their data parsed. */
async function humanEvents(thread: string) {
  const rows = await (await database()).ledgerEvent.findMany({ where: { threadKey: thread, kind: { startsWith: "human_" } }, orderBy: { seq: "asc" } });
  return rows.map((row) => ({ kind: row.kind, actor: row.actor, versionId: row.versionId, data: JSON.parse(row.data) as Record<string, unknown> }));
}

async function revisionRows(packetId: string) {
  return (await database()).humanRevision.findMany({ where: { versionId: packetId }, orderBy: { revision: "asc" } });
}

/** Expects a 409 whose details hold the current state of exactly these threads. */
async function expectConflict(promise: Promise<unknown>, current: HumanState[]): Promise<BatonError> {
  const error = await expectBatonError(promise, "conflict");
  expect(error.status).toBe(409);
  expect(error.message).toMatch(/nothing was written/);
  expect(error.details).toEqual({ current });
  return error;
}

/** Runs `work` (which checks a refusal) and expects the revision and ledger tables exactly as they were. */
async function expectNothingWritten<T>(work: () => Promise<T>): Promise<T> {
  const before = await counts();
  const result = await work();
  expect(await counts()).toEqual(before);
  return result;
}

const stampIsRecent = (stamp: string | null) => {
  expect(stamp).not.toBeNull();
  expect(Math.abs(Date.now() - Date.parse(stamp!))).toBeLessThan(60_000);
};

describe("decide", () => {
  it("approves: revision 1 with the decision, a revision row and a human_approved event", async () => {
    const thread = uniqueThread("approve");
    const packetId = await ingest(thread);
    const state = await approve(thread, packetId);

    const at = state.human.updated_at!;
    stampIsRecent(at);
    expect(state).toEqual({
      thread_key: thread,
      packet_id: packetId,
      human: { revision: 1, updated_at: at, decision: { kind: "approved", by: "olga", at }, answers: [], questions: [] },
    });
    const rows = await revisionRows(packetId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ revision: 1, action: "approved", userId: operator.id, at: new Date(at) });
    expect(JSON.parse(rows[0]!.section)).toEqual(state.human);
    expect(await humanEvents(thread)).toEqual([{ kind: "human_approved", actor: "olga", versionId: packetId, data: { revision: 1, note: null } }]);
  });

  it("keeps an approval's note in the decision and the event", async () => {
    const thread = uniqueThread("note");
    const packetId = await ingest(thread);
    const state = await decide(operator, thread, { kind: "approved", packet_id: packetId, base_revision: 0, note: "ship it" });
    expect(state.human.decision).toEqual({ kind: "approved", by: "olga", at: state.human.updated_at, note: "ship it" });
    expect((await humanEvents(thread))[0]!.data).toEqual({ revision: 1, note: "ship it" });
  });

  it("intervenes: adds question h1, blocking unless told otherwise, and then h2", async () => {
    const thread = uniqueThread("intervene");
    const packetId = await ingest(thread);
    const first = await intervene(thread, packetId, 0, "Why drop the index?");
    const at1 = first.human.updated_at!;
    expect(first.human).toEqual({
      revision: 1,
      updated_at: at1,
      decision: { kind: "intervened", by: "olga", at: at1 },
      answers: [],
      questions: [{ id: "h1", text: "Why drop the index?", by: "olga", at: at1, blocking: true }],
    });

    const second = await intervene(thread, packetId, 1, "And the migration?", false);
    expect(second.human.revision).toBe(2);
    expect(second.human.questions).toEqual([
      first.human.questions[0],
      { id: "h2", text: "And the migration?", by: "olga", at: second.human.updated_at, blocking: false },
    ]);
    expect((await revisionRows(packetId)).map((row) => [row.revision, row.action])).toEqual([
      [1, "intervened"],
      [2, "intervened"],
    ]);
    expect(await humanEvents(thread)).toEqual([
      { kind: "human_intervened", actor: "olga", versionId: packetId, data: { revision: 1, question_id: "h1", question: "Why drop the index?", blocking: true } },
      { kind: "human_intervened", actor: "olga", versionId: packetId, data: { revision: 2, question_id: "h2", question: "And the migration?", blocking: false } },
    ]);
  });

  it("replaces the decision on a later approval, keeping the questions asked and marking them settled", async () => {
    const thread = uniqueThread("change-mind");
    const packetId = await ingest(thread);
    const intervened = await intervene(thread, packetId, 0, "Why?");
    const approved = await approve(thread, packetId, 1, colleague);
    const at = approved.human.updated_at!;
    expect(approved.human).toEqual({
      ...intervened.human,
      revision: 2,
      updated_at: at,
      decision: { kind: "approved", by: "colin", at },
      questions: [{ ...intervened.human.questions[0], settled_by: "colin", settled_at: at }],
    });
    // A later intervention adds an open instruction; the settled one stays settled as it was.
    const again = await intervene(thread, packetId, 2, "One more thing");
    expect(again.human.questions.map((question) => [question.id, question.settled_at ?? null])).toEqual([
      ["h1", at],
      ["h2", null],
    ]);
  });

  it("refuses a write based on an older revision with the current state, writing nothing", async () => {
    const thread = uniqueThread("stale");
    const packetId = await ingest(thread);
    const current = await approve(thread, packetId);
    for (const base of [0, 2]) {
      await expectNothingWritten(() => expectConflict(intervene(thread, packetId, base, "Too late?"), [current]));
    }
    expect(await revisionRows(packetId)).toHaveLength(1);
  });

  it("refuses a write based on a packet that a newer one replaced; the new packet starts at revision 0", async () => {
    const thread = uniqueThread("newer");
    const oldId = await ingest(thread);
    await approve(thread, oldId);
    const newId = await ingest(thread, { summary: "a newer packet" });

    const error = await expectConflict(intervene(thread, oldId, 1, "Still on the old one?"), [
      { thread_key: thread, packet_id: newId, human: emptyHumanSection() },
    ]);
    expect(error.message).toMatch(/newer packet arrived/);
    await expectConflict(approve(thread, oldId, 0), [{ thread_key: thread, packet_id: newId, human: emptyHumanSection() }]);

    const fresh = await approve(thread, newId, 0);
    expect(fresh.human.revision).toBe(1);
    expect(await revisionRows(oldId)).toHaveLength(1);
  });

  it("lets exactly one of two identical concurrent writes through", async () => {
    const thread = uniqueThread("race");
    const packetId = await ingest(thread);
    const results = await Promise.allSettled([approve(thread, packetId, 0, operator), approve(thread, packetId, 0, colleague)]);

    const fulfilled = results.filter((result): result is PromiseFulfilledResult<HumanState> => result.status === "fulfilled");
    const rejected = results.filter((result): result is PromiseRejectedResult => result.status === "rejected");
    expect(fulfilled).toHaveLength(1);
    expect(rejected).toHaveLength(1);
    expect(rejected[0]!.reason).toBeInstanceOf(BatonError);
    expect(rejected[0]!.reason).toMatchObject({ code: "conflict", details: { current: [fulfilled[0]!.value] } });
    expect(await revisionRows(packetId)).toHaveLength(1);
    expect((await humanEvents(thread)).map((event) => event.kind)).toEqual(["human_approved"]);
  });

  it("answers not_found for an unknown thread", async () => {
    await expectNothingWritten(() => expectBatonError(approve(uniqueThread("missing"), "pv_missing"), "not_found"));
  });
});

describe("answer", () => {
  it("writes each answer with the agent's question text", async () => {
    const thread = uniqueThread("answer");
    const packetId = await ingest(thread);
    const state = await answer(operator, thread, {
      packet_id: packetId,
      base_revision: 0,
      answers: [
        { question_id: "q-dlq", answer: "yes, behind a profile" },
        { question_id: "q0", answer: "Redis" },
      ],
    });
    const at = state.human.updated_at!;
    expect(state.human).toEqual({
      revision: 1,
      updated_at: at,
      decision: null,
      questions: [],
      answers: [
        { question_id: "q-dlq", question: "May I add the queue emulator to docker-compose.yml?", answer: "yes, behind a profile", by: "olga", at },
        { question_id: "q0", question: "Which database should the cache use?", answer: "Redis", by: "olga", at },
      ],
    });
    expect((await revisionRows(packetId)).map((row) => row.action)).toEqual(["answered"]);
    expect(await humanEvents(thread)).toEqual([
      {
        kind: "human_answered",
        actor: "olga",
        versionId: packetId,
        data: {
          revision: 1,
          answers: [
            { question_id: "q-dlq", question: "May I add the queue emulator to docker-compose.yml?", answer: "yes, behind a profile" },
            { question_id: "q0", question: "Which database should the cache use?", answer: "Redis" },
          ],
        },
      },
    ]);
  });

  it("refuses an unknown question id, naming it and the known ones, writing nothing", async () => {
    const thread = uniqueThread("unknown-question");
    const packetId = await ingest(thread);
    await expectNothingWritten(async () => {
      const error = await expectBatonError(
        answer(operator, thread, {
          packet_id: packetId,
          base_revision: 0,
          answers: [
            { question_id: "q0", answer: "fine" },
            { question_id: "q-nope", answer: "?" },
          ],
        }),
        "invalid_request",
      );
      expect(error.details).toEqual({ field: "question_id" });
      expect(error.message).toContain('"q-nope"');
      expect(error.message).toContain("answer one of: q0, q-dlq");
    });
  });

  it("refuses any answer on a packet without questions", async () => {
    const thread = uniqueThread("no-questions");
    const packetId = await ingest(thread, { questions_for_human: [] });
    const error = await expectBatonError(answer(operator, thread, { packet_id: packetId, base_revision: 0, answers: [{ question_id: "q0", answer: "x" }] }), "invalid_request");
    expect(error.message).toContain("(none)");
  });
});

describe("answerShared", () => {
  /** `count` threads each asking the same question as q0; returns their targets for answerShared. */
  async function sharedQuestionThreads(name: string, count: number) {
    return Promise.all(
      Array.from({ length: count }, async () => {
        const thread = uniqueThread(name);
        const packetId = await ingest(thread, { questions_for_human: ["Is the staging DB safe to reset?", "Unrelated?"] });
        return { thread_key: thread, packet_id: packetId, base_revision: 0, question_id: "q0" };
      }),
    );
  }

  it("writes the answer into every thread at once", async () => {
    const targets = await sharedQuestionThreads("shared", 3);
    const states = await answerShared(operator, { answer: "Yes, reset it.", targets });

    expect(states.map((state) => [state.thread_key, state.packet_id, state.human.revision])).toEqual(targets.map((target) => [target.thread_key, target.packet_id, 1]));
    for (const [index, target] of targets.entries()) {
      const at = states[index]!.human.updated_at;
      expect(states[index]!.human.answers).toEqual([{ question_id: "q0", question: "Is the staging DB safe to reset?", answer: "Yes, reset it.", by: "olga", at }]);
      expect(await revisionRows(target.packet_id)).toHaveLength(1);
      expect((await humanEvents(target.thread_key)).map((event) => [event.kind, event.data.revision])).toEqual([["human_answered", 1]]);
    }
  });

  it("writes nothing for any thread when one of them is stale, reporting the stale one", async () => {
    const targets = await sharedQuestionThreads("shared-stale", 3);
    const moved = await approve(targets[1]!.thread_key, targets[1]!.packet_id);
    await expectNothingWritten(() => expectConflict(answerShared(operator, { answer: "Yes.", targets }), [moved]));
    for (const target of targets) expect((await revisionRows(target.packet_id)).length).toBe(target === targets[1] ? 1 : 0);
  });

  it("writes one revision with both answers for a thread named twice", async () => {
    const [target] = await sharedQuestionThreads("shared-twice", 1);
    const states = await answerShared(operator, { answer: "Both fine.", targets: [target!, { ...target!, question_id: "q1" }] });
    expect(states).toHaveLength(1);
    expect(states[0]!.human.revision).toBe(1);
    expect(states[0]!.human.answers.map((entry) => [entry.question_id, entry.question, entry.answer])).toEqual([
      ["q0", "Is the staging DB safe to reset?", "Both fine."],
      ["q1", "Unrelated?", "Both fine."],
    ]);
    expect(await revisionRows(target!.packet_id)).toHaveLength(1);
  });

  it("refuses a thread named twice with different bases", async () => {
    const [target] = await sharedQuestionThreads("shared-mixed", 1);
    await expectNothingWritten(async () => {
      const error = await expectBatonError(answerShared(operator, { answer: "x", targets: [target!, { ...target!, question_id: "q1", base_revision: 1 }] }), "invalid_request");
      expect(error.details).toEqual({ field: "targets" });
    });
  });
});

describe("what readers see after a person acted", () => {
  async function card(thread: string) {
    const list = await listThreads(threadListQuerySchema.parse({ q: thread, limit: 500 }));
    const found = list.threads.find((item) => item.key === thread);
    if (!found) throw new Error(`no card for ${thread}`);
    return found.active_packet;
  }

  async function columnOf(thread: string) {
    const board = await loadBoard(threadFiltersSchema.parse({ q: thread }));
    const columns = board.columns.filter((column) => column.cards.some((item) => item.key === thread));
    expect(columns).toHaveLength(1);
    return columns[0]!.id;
  }

  it("serves the latest human section in the merged handoff, after the agent's fields in their own order", async () => {
    const thread = uniqueThread("merged");
    const agentFields = {
      next_action: "continue",
      thread,
      human: { revision: 99, decision: { kind: "approved", by: "the agent itself" } },
      summary: "merged view",
      questions_for_human: ["Which region?"],
      zeta_extra: { kept: true },
    };
    const result = await ingestPacket(agentFields, { kind: "http", actor: "test" });
    const before = await getMergedHandoff(thread);
    expect(before.packetId).toBe(result.packet_id);
    expect(before.body.human).toEqual(emptyHumanSection());

    await approve(thread, result.packet_id);
    const latest = await answer(colleague, thread, { packet_id: result.packet_id, base_revision: 1, answers: [{ question_id: "q0", answer: "eu-west" }] });
    const merged = await getMergedHandoff(thread);
    expect(Object.keys(merged.body)).toEqual(["next_action", "thread", "summary", "questions_for_human", "zeta_extra", "human"]);
    const agentOwn = Object.fromEntries(Object.entries(agentFields).filter(([field]) => field !== "human"));
    expect(merged.body).toEqual({ ...agentOwn, human: latest.human });
    expect((await getThreadDetail(thread)).human).toEqual(latest.human);
  });

  it("shows the revision, decision and unanswered count on the card, dropping open_questions once all are answered", async () => {
    const thread = uniqueThread("card");
    const packetId = await ingest(thread);
    const flagCodes = async () => (await card(thread)).flags.map((flag) => flag.code);
    expect((await card(thread)).human).toEqual({ revision: 0, decision: null, unanswered_questions: 2 });
    expect(await flagCodes()).toContain("open_questions");

    const first = await answer(operator, thread, { packet_id: packetId, base_revision: 0, answers: [{ question_id: "q0", answer: "Redis" }] });
    expect((await card(thread)).human).toEqual({ revision: 1, decision: null, unanswered_questions: 1 });
    expect(await flagCodes()).toContain("open_questions");

    await answer(operator, thread, { packet_id: packetId, base_revision: first.human.revision, answers: [{ question_id: "q-dlq", answer: "no" }] });
    const approved = await approve(thread, packetId, 2);
    expect((await card(thread)).human).toEqual({ revision: 3, decision: approved.human.decision, unanswered_questions: 0 });
    expect(await flagCodes()).not.toContain("open_questions");
  });

  it("places an approved card in Approved and an intervened one in Intervened", async () => {
    const approvedThread = uniqueThread("board-approved");
    const intervenedThread = uniqueThread("board-intervened");
    const approvedId = await ingest(approvedThread);
    const intervenedId = await ingest(intervenedThread);
    expect(await columnOf(approvedThread)).toBe("needs_you");

    await approve(approvedThread, approvedId);
    await intervene(intervenedThread, intervenedId, 0, "Stop: wrong branch?");
    expect(await columnOf(approvedThread)).toBe("approved");
    expect(await columnOf(intervenedThread)).toBe("intervened");
  });
});

describe("HumanRevision rows", () => {
  async function rawWrite(sql: Prisma.Sql) {
    return inTransaction(async (tx) => (await sqlExecutor(tx)).execute(sql));
  }

  it("cannot be changed or deleted, at the database", async () => {
    const thread = uniqueThread("append-only");
    const packetId = await ingest(thread);
    await approve(thread, packetId);
    const [row] = await revisionRows(packetId);

    await expect(rawWrite(Prisma.sql`UPDATE "HumanRevision" SET "section" = '{}' WHERE "id" = ${row!.id}`)).rejects.toThrow(/HumanRevision is append-only/);
    await expect(rawWrite(Prisma.sql`DELETE FROM "HumanRevision" WHERE "id" = ${row!.id}`)).rejects.toThrow(/HumanRevision is append-only/);
    expect(await revisionRows(packetId)).toEqual([row]);
  });

  it("are unique per version and revision", async () => {
    const thread = uniqueThread("unique");
    const packetId = await ingest(thread);
    await approve(thread, packetId);
    const [row] = await revisionRows(packetId);
    const duplicate = Prisma.sql`INSERT INTO "HumanRevision" ("id", "versionId", "threadId", "revision", "action", "section", "userId", "at")
      VALUES ('hr_duplicate', ${packetId}, ${row!.threadId}, 1, 'approved', '{}', ${operator.id}, ${new Date()})`;
    await expect(rawWrite(duplicate)).rejects.toThrow(/UNIQUE constraint failed|violates unique constraint/);
  });
});

describe("request schemas", () => {
  const fieldsOf = (schema: { safeParse(value: unknown): { success: boolean; error?: { issues: { path: PropertyKey[] }[] } } }, value: unknown) => {
    const result = schema.safeParse(value);
    return result.success ? [] : result.error!.issues.map((issue) => issue.path.join("."));
  };

  it("accept what the pages send", () => {
    expect(fieldsOf(decisionRequestSchema, { kind: "approved", packet_id: "pv_1", base_revision: 0 })).toEqual([]);
    expect(fieldsOf(decisionRequestSchema, { kind: "intervened", packet_id: "pv_1", base_revision: 3, question: "Why?", blocking: false })).toEqual([]);
    expect(fieldsOf(answersRequestSchema, { packet_id: "pv_1", base_revision: 0, answers: [{ question_id: "q0", answer: "yes" }] })).toEqual([]);
    expect(fieldsOf(sharedAnswerRequestSchema, { answer: "yes", targets: [{ thread_key: "t", question_id: "q0", packet_id: "pv_1", base_revision: 0 }] })).toEqual([]);
  });

  it("refuse a missing base, an intervention without a question, blank answers and unknown keys", () => {
    expect(fieldsOf(decisionRequestSchema, { kind: "approved", packet_id: "pv_1" })).toEqual(["base_revision"]);
    expect(fieldsOf(decisionRequestSchema, { kind: "approved", packet_id: "pv_1", base_revision: -1 })).toEqual(["base_revision"]);
    expect(fieldsOf(decisionRequestSchema, { kind: "intervened", packet_id: "pv_1", base_revision: 0 })).toEqual(["question"]);
    expect(fieldsOf(decisionRequestSchema, { kind: "rejected", packet_id: "pv_1", base_revision: 0 })).toEqual(["kind"]);
    expect(fieldsOf(answersRequestSchema, { packet_id: "pv_1", base_revision: 0, answers: [{ question_id: "q0", answer: "   " }] })).toEqual(["answers.0.answer"]);
    expect(fieldsOf(answersRequestSchema, { packet_id: "pv_1", base_revision: 0, answers: [] })).toEqual(["answers"]);
    expect(fieldsOf(decisionRequestSchema, { kind: "approved", packet_id: "pv_1", base_revision: 0, force: true })).toEqual([""]);
  });
});
