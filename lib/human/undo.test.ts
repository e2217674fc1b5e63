import { describe, expect, it } from "vitest";
import type { Person } from "../auth/roles";
import { database } from "../db/client";
import { ingestPacket } from "../ingest/ingest";
import { expectBatonError } from "@/testing/expect-baton-error";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { humanWritesSetup } from "@/testing/human-writes";
import { listOpenQuestions } from "../views/questions/inbox";
import { answerShared, decide } from "./actions";
import { undoAnswers } from "./undo";

freshDatabaseForThisFile();

let operator: Person;
let colleague: Person;
const threadsUsed = humanWritesSetup((people) => ({ operator, colleague } = people));

let serial = 0;

/** `count` threads asking the same question; answered together by `person`, as the inbox does. Returns what Undo would send. */
async function answeredGroup(name: string, count: number, person = operator) {
  const question = `May I reset ${name}-${++serial}?`;
  const targets = [];
  for (let index = 0; index < count; index++) {
    const thread = `undo/${name}-${serial}-${index}`;
    threadsUsed.push(thread);
    const { packet_id } = await ingestPacket({ thread, summary: "s", next_action: "n", questions_for_human: [question] }, { kind: "http", actor: "test" });
    targets.push({ thread_key: thread, packet_id, question_id: "q0", base_revision: 0 });
  }
  const written = await answerShared(person, { answer: "Yes.", targets });
  return { question, undo: written.map((state) => ({ thread_key: state.thread_key, packet_id: state.packet_id, revision: state.human.revision })) };
}

const openIn = async (threads: string[]) => (await listOpenQuestions({ threadKeys: threads })).total;

async function ledgerOf(thread: string) {
  const rows = await (await database()).ledgerEvent.findMany({ where: { threadKey: thread, kind: { startsWith: "human_" } }, orderBy: { seq: "asc" } });
  return rows.map((row) => [row.kind, JSON.parse(row.data) as Record<string, unknown>] as const);
}

describe("undoAnswers", () => {
  it("takes an answer back from every thread with a new revision and a ledger event: the question is open again", async () => {
    const { undo } = await answeredGroup("all", 3);
    const threads = undo.map((target) => target.thread_key);
    expect(await openIn(threads)).toBe(0);

    const { results } = await undoAnswers(operator, { targets: undo });

    expect(results.map((result) => [result.thread_key, result.outcome, result.current.human.revision, result.current.human.answers.length])).toEqual(
      threads.map((thread) => [thread, "undone", 2, 0]),
    );
    expect(await openIn(threads)).toBe(3);
    const rows = await (await database()).humanRevision.findMany({ where: { versionId: undo[0]!.packet_id }, orderBy: { revision: "asc" } });
    expect(rows.map((row) => [row.revision, row.action])).toEqual([
      [1, "answered"],
      [2, "answer_undone"],
    ]);
    const ledger = await ledgerOf(threads[0]!);
    expect(ledger.map(([kind, data]) => [kind, data.revision, data.undoes_revision])).toEqual([
      ["human_answered", 1, undefined],
      ["human_answer_undone", 2, 1],
    ]);
    expect(ledger[1]![1].answers).toEqual([{ question_id: "q0", question: expect.stringMatching(/^May I reset all-/), answer: "Yes." }]);
  });

  it("leaves a thread that moved on since alone and reports it with its current state; the others are undone", async () => {
    const { undo } = await answeredGroup("raced", 2);
    // A colleague approves the second thread after the answer: revision 2 is theirs.
    await decide(colleague, undo[1]!.thread_key, { kind: "approved", packet_id: undo[1]!.packet_id, base_revision: 1 });

    const { results } = await undoAnswers(operator, { targets: undo });

    expect(results.map((result) => [result.outcome, result.current.human.revision])).toEqual([
      ["undone", 2],
      ["conflict", 2],
    ]);
    expect(results[1]!.current.human.decision).toMatchObject({ kind: "approved", by: "colin" });
    expect(results[1]!.current.human.answers.map((entry) => entry.answer)).toEqual(["Yes."]);
    expect((await ledgerOf(undo[1]!.thread_key)).map(([kind]) => kind)).toEqual(["human_answered", "human_approved"]);
  });

  it("reports a newer packet as a conflict too", async () => {
    const { undo } = await answeredGroup("newer", 1);
    await ingestPacket({ thread: undo[0]!.thread_key, summary: "s2", next_action: "n2" }, { kind: "http", actor: "test" });
    const { results } = await undoAnswers(operator, { targets: undo });
    expect(results[0]!.outcome).toBe("conflict");
    expect(results[0]!.current.packet_id).not.toBe(undo[0]!.packet_id);
  });

  it("refuses to undo someone else's answer, or a revision that is not an answer, and writes nothing", async () => {
    const { undo } = await answeredGroup("theirs", 1, colleague);
    await expectBatonError(undoAnswers(operator, { targets: undo }), "forbidden");
    const { undo: mine } = await answeredGroup("approval", 1);
    await decide(operator, mine[0]!.thread_key, { kind: "approved", packet_id: mine[0]!.packet_id, base_revision: 1 });
    await expectBatonError(undoAnswers(operator, { targets: [{ ...mine[0]!, revision: 2 }] }), "forbidden");
    expect((await ledgerOf(undo[0]!.thread_key)).map(([kind]) => kind)).toEqual(["human_answered"]);
  });

  it("undoing twice reports the second as a conflict (the undo is a newer revision)", async () => {
    const { undo } = await answeredGroup("twice", 1);
    expect((await undoAnswers(operator, { targets: undo })).results[0]!.outcome).toBe("undone");
    expect((await undoAnswers(operator, { targets: undo })).results[0]!.outcome).toBe("conflict");
  });
});
