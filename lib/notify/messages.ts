import { sameQuestionKey, type HumanSection } from "../human/section";
import { HUMAN_ACTION_EVENTS } from "./events";
import type { Notification } from "./payload";

/** The words of each notification, from facts already read (docs/decisions/018-webhooks.md). */

export type NotificationBase = Omit<Notification, "event" | "summary" | "detail" | "lines">;

export type HumanActionKind = keyof typeof HUMAN_ACTION_EVENTS;
export const isHumanAction = (kind: string): kind is HumanActionKind => Object.hasOwn(HUMAN_ACTION_EVENTS, kind);

export interface RiskRow {
  riskId: string;
  severity: string;
  detail: string;
  mitigation: string | null;
  fingerprint: string;
}

type QuestionRow = { questionId: string; question: string; blocking: boolean; options: string };

const QUOTE_MAX = 200;
const quote = (text: string) => (text.length > QUOTE_MAX ? `${text.slice(0, QUOTE_MAX - 1)}…` : text);
const andMore = (count: number) => (count > 1 ? ` (and ${count - 1} more)` : "");

/** One risk per fingerprint, the first. */
export function uniqueByFingerprint<T extends { fingerprint: string }>(risks: T[]): T[] {
  const seen = new Set<string>();
  return risks.filter((risk) => !seen.has(risk.fingerprint) && seen.add(risk.fingerprint));
}

/** Questions the previous active version did not ask. */
export function questionsAsked(base: NotificationBase, questions: QuestionRow[], previous: { question: string }[]): Notification | null {
  // The same question differs at most in case, spacing or Unicode form: the inbox's rule.
  const asked = new Set(previous.map((question) => sameQuestionKey(question.question)));
  const fresh = questions.filter((question) => !asked.has(sameQuestionKey(question.question)));
  if (!fresh.length) return null;
  return {
    ...base,
    event: "question.asked",
    summary: `${base.thread.agent ?? "The agent"} asks: ${quote(fresh[0]!.question)}${andMore(fresh.length)}`,
    detail: {
      questions: fresh.map((question) => ({
        id: question.questionId,
        question: question.question,
        blocking: question.blocking,
        options: JSON.parse(question.options) as string[],
      })),
    },
    lines: fresh.map((question) => `${question.blocking ? "[blocking] " : ""}${question.question}`),
  };
}

/** Critical risks new to the thread's critical list: one that was there, less severe, counts too. */
export function criticalRisks(base: NotificationBase, risks: RiskRow[], previous: { fingerprint: string; severity: string }[]): Notification | null {
  const known = new Set(previous.filter((risk) => risk.severity === "critical").map((risk) => risk.fingerprint));
  const fresh = uniqueByFingerprint(risks.filter((risk) => risk.severity === "critical" && !known.has(risk.fingerprint)));
  if (!fresh.length) return null;
  return {
    ...base,
    event: "risk.critical",
    summary: `New critical risk: ${quote(fresh[0]!.detail)}${andMore(fresh.length)}`,
    detail: { risks: fresh.map((risk) => ({ id: risk.riskId, fingerprint: risk.fingerprint, detail: risk.detail, mitigation: risk.mitigation })) },
    lines: fresh.map((risk) => risk.detail),
  };
}

export function risksRegressed(base: NotificationBase, regressed: RiskRow[]): Notification | null {
  if (!regressed.length) return null;
  return {
    ...base,
    event: "risk.regressed",
    summary: `A resolved risk is back: ${quote(regressed[0]!.detail)}${andMore(regressed.length)}`,
    detail: { risks: regressed.map((risk) => ({ id: risk.riskId, fingerprint: risk.fingerprint, severity: risk.severity, detail: risk.detail })) },
    lines: regressed.map((risk) => `${risk.severity}: ${risk.detail}`),
  };
}

export function verdictFailedNotification(base: NotificationBase, reasons: string[]): Notification {
  return {
    ...base,
    event: "verdict.failed",
    summary: `The verdict failed: ${quote(reasons.join("; ") || "see the thread")}`,
    detail: { reasons },
    lines: reasons,
  };
}

/** The message of a person's action, from the section it produced. */
export function humanActionNotification(kind: HumanActionKind, base: NotificationBase, human: HumanSection, nextAction: string | null): Notification {
  const event = HUMAN_ACTION_EVENTS[kind];
  const common = { ...base, event, human };
  const decision = human.decision;
  if (kind === "human_answered") {
    // This revision's answers: the ones stamped with its time.
    const answers = human.answers.filter((entry) => entry.at === human.updated_at);
    const by = answers[0]?.by ?? "A person";
    return {
      ...common,
      summary: `${by} answered: ${quote(answers[0]?.question ?? "a question")}${andMore(answers.length)}`,
      detail: { revision: human.revision, answers: answers.map(({ question_id, question, answer }) => ({ question_id, question, answer })) },
      lines: answers.map((entry) => `${entry.question} → ${entry.answer}`),
    };
  }
  if (kind === "human_intervened") {
    const question = human.questions.at(-1);
    return {
      ...common,
      summary: `${decision?.by ?? "A person"} intervened: ${quote(question?.text ?? "see the thread")}`,
      detail: { revision: human.revision, decision, question: question ?? null },
      lines: question ? [`${question.blocking ? "[blocking] " : ""}${question.text}`] : [],
    };
  }
  return {
    ...common,
    summary: `${decision?.by ?? "A person"} approved: ${quote(nextAction ?? "the next action")}`,
    detail: { revision: human.revision, decision, next_action: nextAction },
    lines: decision?.note ? [`Note: ${decision.note}`] : [],
  };
}
