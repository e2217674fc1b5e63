import "server-only";
import { z } from "zod";
import { inTransaction, isUniqueViolation, type Tx } from "../db/client";
import { BatonError } from "../core/errors";
import { newId } from "../db/ids";
import { appendLedgerEvents, type NewLedgerEvent } from "../events/ledger";
import { announceLedger } from "../events/bus";
import type { Person } from "../auth/roles";
import type { HumanStateDto } from "./dto";
import { scheduleWriteBack } from "./writeback/write-human-section";
import { latestHumanRevision, sectionOf, settleOpenQuestions, type HumanSection } from "./section";

/**
 * People's writes to a packet's human section: approve, intervene, answer.
 * Every write names the version and the human-section revision it was based
 * on; a write based on anything older is refused with the current state (409),
 * so nothing is overwritten silently. Each write is a new revision row plus a
 * ledger event, in one transaction.
 */

const text = (field: string, max: number) =>
  z
    .string({ error: `${field} must be a string` })
    .trim()
    .min(1, `${field} must not be empty`)
    .max(max, `${field} must be at most ${max} characters`);

const basedOn = {
  packet_id: z.string({ error: "packet_id must be the id of the packet you saw" }).min(1, "packet_id must not be empty"),
  base_revision: z.number({ error: "base_revision must be the human-section revision you saw (an integer)" }).int().nonnegative(),
};

export const decisionRequestSchema = z.discriminatedUnion(
  "kind",
  [
    z.strictObject({ ...basedOn, kind: z.literal("approved"), note: text("note", 2000).optional() }),
    z.strictObject({
      ...basedOn,
      kind: z.literal("intervened"),
      question: text("question", 4000),
      blocking: z.boolean({ error: "blocking must be true or false" }).optional(),
    }),
  ],
  { error: 'kind must be "approved" or "intervened"' },
);
export type DecisionRequest = z.infer<typeof decisionRequestSchema>;

const answerItem = z.strictObject({
  question_id: z.string({ error: "question_id must be a string" }).min(1).max(200),
  answer: text("answer", 4000),
});
export const answersRequestSchema = z.strictObject({
  ...basedOn,
  answers: z.array(answerItem).min(1, "answers must hold at least one answer").max(100, "answers may hold at most 100 answers"),
});
export type AnswersRequest = z.infer<typeof answersRequestSchema>;

/** The inbox answers identical questions from several threads at once. */
export const sharedAnswerRequestSchema = z.strictObject({
  answer: text("answer", 4000),
  targets: z
    .array(z.strictObject({ thread_key: z.string().min(1), question_id: answerItem.shape.question_id, ...basedOn }))
    .min(1, "targets must name at least one question")
    .max(200, "targets may name at most 200 questions"),
});
export type SharedAnswerRequest = z.infer<typeof sharedAnswerRequestSchema>;

/** A thread's human state as it is now: what a write answers with, and what a refused write answers with. */
export type HumanState = HumanStateDto;

interface Target {
  threadKey: string;
  packetId: string;
  baseRevision: number;
  /** The new section from the current one; `questions` are the version's agent questions. */
  change: (current: HumanSection, context: ChangeContext) => { section: HumanSection; event: Omit<NewLedgerEvent, "actor" | "threadKey" | "versionId"> };
}

interface ChangeContext {
  person: Person;
  at: string;
  questions: Map<string, string>;
}

/** A thread's active version and its human section, read inside the write's transaction. */
export async function loadState(tx: Tx, threadKey: string) {
  const thread = await tx.thread.findUnique({
    where: { key: threadKey },
    select: {
      id: true,
      activeVersion: {
        select: { id: true, questions: { select: { questionId: true, question: true } }, humanRevisions: latestHumanRevision },
      },
    },
  });
  if (!thread?.activeVersion) throw new BatonError("not_found", `Thread "${threadKey}" was not found.`);
  const version = thread.activeVersion;
  return {
    threadId: thread.id,
    versionId: version.id,
    section: sectionOf(version.humanRevisions),
    questions: new Map(version.questions.map((question) => [question.questionId, question.question])),
  };
}

function conflict(states: HumanState[]): BatonError {
  const newer = states.length === 1 ? "Someone acted on this packet, or a newer packet arrived, since you loaded it" : "Some of these packets changed since you loaded them";
  return new BatonError("conflict", `${newer}: nothing was written. Review the current state and send again.`, { current: states });
}

/** Applies changes to several threads in one transaction: all are written, or none. */
async function applyChanges(person: Person, targets: Target[]): Promise<HumanState[]> {
  const at = new Date();
  const stamp = at.toISOString();
  try {
    const results = await inTransaction(async (tx) => {
      const written: HumanState[] = [];
      const stale: HumanState[] = [];
      const events: NewLedgerEvent[] = [];
      for (const target of targets) {
        const state = await loadState(tx, target.threadKey);
        if (state.versionId !== target.packetId || state.section.revision !== target.baseRevision) {
          stale.push({ thread_key: target.threadKey, packet_id: state.versionId, human: state.section });
          continue;
        }
        const { section, event } = target.change(state.section, { person, at: stamp, questions: state.questions });
        const next = await writeRevision(tx, person, at, { threadKey: target.threadKey, ...state }, section, event.kind);
        events.push({ ...event, actor: person.username, threadKey: target.threadKey, versionId: state.versionId, data: { revision: next.revision, ...event.data } });
        written.push({ thread_key: target.threadKey, packet_id: state.versionId, human: next });
      }
      if (stale.length) throw conflict(stale);
      await appendLedgerEvents(tx, events, at);
      return written;
    });
    announceLedger();
    // The person's write is done; the files on disk follow in the background.
    void scheduleWriteBack(results.map((result) => result.thread_key));
    return results;
  } catch (error) {
    // Another instance wrote the same revision between our read and our insert.
    if (isUniqueViolation(error)) throw conflict(await currentStates(targets.map((target) => target.threadKey)));
    throw error;
  }
}

/** Stores `section` as the next revision of the version's human section (the unique (version, revision) key refuses a racing twin). */
export async function writeRevision(
  tx: Tx,
  person: Person,
  at: Date,
  state: { threadKey: string; threadId: string; versionId: string; section: HumanSection },
  section: HumanSection,
  kind: NewLedgerEvent["kind"],
): Promise<HumanSection> {
  const next: HumanSection = { ...section, revision: state.section.revision + 1, updated_at: at.toISOString() };
  await tx.humanRevision.create({
    data: {
      id: newId("hr", at.getTime()),
      versionId: state.versionId,
      threadId: state.threadId,
      revision: next.revision,
      action: kind.replace("human_", ""),
      section: JSON.stringify(next),
      userId: person.id,
      at,
    },
  });
  return next;
}

async function currentStates(threadKeys: string[]): Promise<HumanState[]> {
  return inTransaction(async (tx) =>
    Promise.all(
      threadKeys.map(async (threadKey) => {
        const state = await loadState(tx, threadKey);
        return { thread_key: threadKey, packet_id: state.versionId, human: state.section };
      }),
    ),
  );
}

export async function decide(person: Person, threadKey: string, request: DecisionRequest): Promise<HumanState> {
  const [state] = await applyChanges(person, [
    {
      threadKey,
      packetId: request.packet_id,
      baseRevision: request.base_revision,
      change: (current, { at }) => {
        if (request.kind === "approved") {
          const decision = { kind: "approved" as const, by: person.username, at, ...(request.note ? { note: request.note } : {}) };
          const questions = settleOpenQuestions(current.questions, person.username, at);
          return { section: { ...current, decision, questions }, event: { kind: "human_approved", data: { note: request.note ?? null } } };
        }
        const question = { id: `h${current.questions.length + 1}`, text: request.question, by: person.username, at, blocking: request.blocking ?? true };
        return {
          section: { ...current, decision: { kind: "intervened", by: person.username, at }, questions: [...current.questions, question] },
          event: { kind: "human_intervened", data: { question_id: question.id, question: question.text, blocking: question.blocking } },
        };
      },
    },
  ]);
  return state!;
}

function answerChange(answers: { question_id: string; answer: string }[]): Target["change"] {
  return (current, { person, at, questions }) => {
    const unknown = answers.filter((answer) => !questions.has(answer.question_id)).map((answer) => answer.question_id);
    if (unknown.length) {
      throw new BatonError("invalid_request", `The packet has no question with the id ${unknown.map((id) => `"${id}"`).join(", ")}; answer one of: ${[...questions.keys()].join(", ") || "(none)"}.`, {
        field: "question_id",
      });
    }
    const entries = answers.map((answer) => ({ question_id: answer.question_id, question: questions.get(answer.question_id)!, answer: answer.answer, by: person.username, at }));
    return { section: { ...current, answers: [...current.answers, ...entries] }, event: { kind: "human_answered", data: { answers: entries.map(({ question_id, question, answer }) => ({ question_id, question, answer })) } } };
  };
}

export async function answer(person: Person, threadKey: string, request: AnswersRequest): Promise<HumanState> {
  const [state] = await applyChanges(person, [
    { threadKey, packetId: request.packet_id, baseRevision: request.base_revision, change: answerChange(request.answers) },
  ]);
  return state!;
}

/** One answer written into every named question's thread, all or none (a thread named twice gets both answers in one revision). */
export async function answerShared(person: Person, request: SharedAnswerRequest): Promise<HumanState[]> {
  const byThread = new Map<string, SharedAnswerRequest["targets"]>();
  for (const target of request.targets) byThread.set(target.thread_key, [...(byThread.get(target.thread_key) ?? []), target]);
  const targets: Target[] = [];
  for (const [threadKey, items] of byThread) {
    const first = items[0]!;
    if (items.some((item) => item.packet_id !== first.packet_id || item.base_revision !== first.base_revision)) {
      throw new BatonError("invalid_request", `targets names thread "${threadKey}" with different packet_id or base_revision values; send what you saw.`, { field: "targets" });
    }
    targets.push({
      threadKey,
      packetId: first.packet_id,
      baseRevision: first.base_revision,
      change: answerChange(items.map((item) => ({ question_id: item.question_id, answer: request.answer }))),
    });
  }
  return applyChanges(person, targets);
}
