import { z } from "zod";

/**
 * The human section of a packet version (docs/contract.md#the-human-section):
 * everything people did, served beside the agent's fields. Client-safe.
 */
export const DECISION_KINDS = ["approved", "intervened"] as const;
export type DecisionKind = (typeof DECISION_KINDS)[number];

export const humanDecisionSchema = z.object({
  kind: z.enum(DECISION_KINDS),
  by: z.string(),
  at: z.string(),
  note: z.string().optional(),
});
export const humanAnswerSchema = z.object({
  question_id: z.string(),
  question: z.string(),
  answer: z.string(),
  by: z.string(),
  at: z.string(),
});
export const humanQuestionSchema = z.object({
  id: z.string(),
  text: z.string(),
  by: z.string(),
  at: z.string(),
  blocking: z.boolean(),
  /** Set when a later approval settled the instruction (docs/contract.md#the-human-section); absent while it is open. */
  settled_by: z.string().optional(),
  settled_at: z.string().optional(),
});
export const humanSectionSchema = z.object({
  revision: z.number().int().nonnegative(),
  updated_at: z.string().nullable(),
  decision: humanDecisionSchema.nullable(),
  answers: z.array(humanAnswerSchema),
  questions: z.array(humanQuestionSchema),
});
export type HumanSection = z.infer<typeof humanSectionSchema>;
export type HumanAnswer = z.infer<typeof humanAnswerSchema>;
export type HumanDecision = z.infer<typeof humanDecisionSchema>;
export type HumanQuestion = z.infer<typeof humanQuestionSchema>;

/** A new version starts here: revision 0, nothing decided. */
export const emptyHumanSection = (): HumanSection => ({ revision: 0, updated_at: null, decision: null, answers: [], questions: [] });

/** An approval settles every instruction still open: the person saw them and chose to go ahead (docs/decisions/055-approval-settles-instructions.md). */
export function settleOpenQuestions(questions: readonly HumanQuestion[], by: string, at: string): HumanQuestion[] {
  return questions.map((question) => (question.settled_at ? question : { ...question, settled_by: by, settled_at: at }));
}

/** The ids of the agent's questions that have an answer. */
export const answeredQuestionIds = (section: HumanSection): Set<string> => new Set(section.answers.map((answer) => answer.question_id));

/** What a card needs of the human section: the revision to act on, the decision, and what is still unanswered. */
export const humanSummarySchema = z.object({
  revision: z.number().int().nonnegative(),
  decision: humanDecisionSchema.nullable(),
  unanswered_questions: z.number().int().nonnegative(),
});
export type HumanSummary = z.infer<typeof humanSummarySchema>;

/** Answers are written only for the version's own questions (lib/human/actions.ts), so counting ids is enough. */
export function summariseHuman(section: HumanSection, questionCount: number): HumanSummary {
  return {
    revision: section.revision,
    decision: section.decision,
    unanswered_questions: Math.max(0, questionCount - answeredQuestionIds(section).size),
  };
}

/** The stored section of a revision row, or the empty one when no person acted yet. */
export function sectionOf(rows: readonly { section: string }[]): HumanSection {
  return rows[0] ? humanSectionSchema.parse(JSON.parse(rows[0].section)) : emptyHumanSection();
}

/** Select for a version's latest human revision (Prisma include/select). */
export const latestHumanRevision = { orderBy: { revision: "desc" }, take: 1, select: { section: true } } as const;

/** When two questions are the same question (the inbox groups them; the webhooks announce only new ones). */
export function sameQuestionKey(text: string): string {
  return text.normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim();
}
