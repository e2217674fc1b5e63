import "server-only";
import { z } from "zod";
import { inTransaction, isUniqueViolation } from "../db/client";
import { BatonError } from "../core/errors";
import { appendLedgerEvents, type NewLedgerEvent } from "../events/ledger";
import { announceLedger } from "../events/bus";
import type { Person } from "../auth/roles";
import type { AnswerUndoResultDto, AnswerUndoOutcomeDto } from "./dto";
import { scheduleWriteBack } from "./writeback/write-human-section";
import { loadState, writeRevision } from "./actions";
import { humanSectionSchema } from "./section";

/**
 * Taking back an answer a person just sent (the inbox's Undo, docs/decisions/063-answer-undo.md).
 * Append-only: each thread gets a new revision without the answers the undone revision added,
 * and a `human_answer_undone` ledger event. A thread whose human section moved on since (a newer
 * revision, a newer packet) is left alone and reported with its current state; the others are
 * written together, in one transaction.
 */

export const answerUndoRequestSchema = z.strictObject({
  targets: z
    .array(
      z.strictObject({
        thread_key: z.string({ error: "thread_key must be a string" }).min(1, "thread_key must not be empty"),
        packet_id: z.string({ error: "packet_id must be the id of the packet answered" }).min(1, "packet_id must not be empty"),
        revision: z.number({ error: "revision must be the human-section revision the answer wrote (an integer)" }).int().positive(),
      }),
    )
    .min(1, "targets must name at least one answered thread")
    .max(200, "targets may name at most 200 threads"),
});
export type AnswerUndoRequest = z.infer<typeof answerUndoRequestSchema>;

export async function undoAnswers(person: Person, request: AnswerUndoRequest): Promise<AnswerUndoResultDto> {
  const threadKeys = new Set<string>();
  for (const target of request.targets) {
    if (threadKeys.has(target.thread_key)) throw new BatonError("invalid_request", `targets names thread "${target.thread_key}" twice; name each answered thread once.`, { field: "targets" });
    threadKeys.add(target.thread_key);
  }
  const at = new Date();
  let results: AnswerUndoOutcomeDto[];
  try {
    results = await inTransaction(async (tx) => {
      const outcomes: AnswerUndoOutcomeDto[] = [];
      const events: NewLedgerEvent[] = [];
      for (const target of request.targets) {
        const state = await loadState(tx, target.thread_key);
        const current = { thread_key: target.thread_key, packet_id: state.versionId, human: state.section };
        if (state.versionId !== target.packet_id || state.section.revision !== target.revision) {
          outcomes.push({ thread_key: target.thread_key, outcome: "conflict", current });
          continue;
        }
        const [answered, before] = await Promise.all(
          [target.revision, target.revision - 1].map((revision) =>
            tx.humanRevision.findUnique({ where: { versionId_revision: { versionId: state.versionId, revision } }, select: { action: true, userId: true, section: true } }),
          ),
        );
        if (answered?.action !== "answered" || answered.userId !== person.id) {
          throw new BatonError("forbidden", `Revision ${target.revision} of thread "${target.thread_key}" is not an answer of yours: only your own answers can be undone.`, { field: "targets" });
        }
        const kept = before ? humanSectionSchema.parse(JSON.parse(before.section)).answers.length : 0;
        const undone = state.section.answers.slice(kept);
        const human = await writeRevision(tx, person, at, { threadKey: target.thread_key, ...state }, { ...state.section, answers: state.section.answers.slice(0, kept) }, "human_answer_undone");
        events.push({
          kind: "human_answer_undone",
          actor: person.username,
          threadKey: target.thread_key,
          versionId: state.versionId,
          data: { revision: human.revision, undoes_revision: target.revision, answers: undone.map(({ question_id, question, answer }) => ({ question_id, question, answer })) },
        });
        outcomes.push({ thread_key: target.thread_key, outcome: "undone", current: { thread_key: target.thread_key, packet_id: state.versionId, human } });
      }
      await appendLedgerEvents(tx, events, at);
      return outcomes;
    });
  } catch (error) {
    // Another instance wrote the next revision between our read and our insert: every thread is reported as it is now.
    if (!isUniqueViolation(error)) throw error;
    results = await inTransaction(async (tx) =>
      Promise.all(
        request.targets.map(async (target) => {
          const state = await loadState(tx, target.thread_key);
          return { thread_key: target.thread_key, outcome: "conflict" as const, current: { thread_key: target.thread_key, packet_id: state.versionId, human: state.section } };
        }),
      ),
    );
  }
  const undone = results.filter((result) => result.outcome === "undone").map((result) => result.thread_key);
  if (undone.length) {
    announceLedger();
    void scheduleWriteBack(undone);
  }
  return { results };
}
