import type { CanonicalPacket } from "./canonical";
import type { NormaliseNotes } from "./normalise";
import { describeMapping } from "./aliases";
import { CORE_FIELDS } from "./schema";

/** Lint flags: stable codes, each shown with its reason in words. */
export const FLAG_CODES = [
  "missing_next_action",
  "missing_fields",
  "unknown_severity",
  "dirty_state",
  "verdict_failed",
  "verdict_missing",
  "open_questions",
  "clock_skew",
  "mapped_from",
  "stale",
  // Watchdog findings across threads and versions (lib/board/watchdog/findings.ts), added by the board.
  "duplicate_topic",
  "commit_regressed",
  // The code host's reports on the thread's branch (lib/integrations), added by the board.
  "ci_failing",
  "changes_requested",
] as const;
export type FlagCode = (typeof FLAG_CODES)[number];
export interface Flag {
  code: FlagCode;
  reason: string;
}

/** Flags that put a card in front of a person (docs/product.md#needs-a-person). */
export const NEEDS_PERSON_FLAGS: ReadonlySet<FlagCode> = new Set([
  "open_questions",
  "missing_next_action",
  "dirty_state",
  "verdict_failed",
  "duplicate_topic",
  "commit_regressed",
  "ci_failing",
  "changes_requested",
]);

export const FLAG_TITLES: Record<FlagCode, string> = {
  missing_next_action: "No next action",
  missing_fields: "Missing fields",
  unknown_severity: "Unknown severity",
  dirty_state: "Dirty workbench",
  verdict_failed: "Verdict failed",
  verdict_missing: "No verdict",
  open_questions: "Open questions",
  clock_skew: "Clock skew",
  mapped_from: "Mapped from another format",
  stale: "Stale",
  duplicate_topic: "Same topic twice",
  commit_regressed: "Commit went back",
  ci_failing: "CI failing",
  changes_requested: "Changes requested",
};

export const CLOCK_SKEW_MS = 24 * 60 * 60 * 1000;
export const REVIEW_PASS_TOTAL = 7;
// Before this, a producer clock is not a clock: a reset machine, or seconds read as something else.
const EARLIEST_SANE_MS = Date.UTC(2000, 0, 1);

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`;

function describeDuration(ms: number): string {
  const hours = Math.round(ms / 3_600_000);
  return hours >= 48 ? plural(Math.round(hours / 24), "day") : plural(hours, "hour");
}

/** Why an inline verdict counts as failed, or null when it does not. */
export function inlineVerdictFailure(verdict: CanonicalPacket["verdict"]): string | null {
  if (!verdict) return null;
  const reasons: string[] = [];
  if (verdict.passed === false) reasons.push("verification did not pass");
  if (verdict.review_verdict === "soft_fail" || verdict.review_verdict === "hard_fail") {
    reasons.push(`review verdict is ${verdict.review_verdict}`);
  }
  if (verdict.review_total !== undefined && verdict.review_total < REVIEW_PASS_TOTAL) {
    reasons.push(`review total ${verdict.review_total}/10 is below ${REVIEW_PASS_TOTAL}`);
  }
  return reasons.length ? reasons.join("; ") : null;
}

/**
 * The flags a packet carries on its own, decided once at ingest. `stale`
 * depends on the clock and is added by the board; verdict files behind the
 * pointers are read by the thread view.
 */
export function lintPacket(canonical: CanonicalPacket, notes: NormaliseNotes, receivedAtMs: number): Flag[] {
  const flags: Flag[] = [];
  if (!canonical.next_action) {
    flags.push({
      code: "missing_next_action",
      reason: notes.nextActionSentinel
        ? "next_action is the generator's placeholder \"needs human\": the agent recorded no next step."
        : "No next_action: the next session has no first step.",
    });
  }
  const missing = CORE_FIELDS.filter((field) => canonical[field] === undefined && !(field === "next_action" && notes.nextActionSentinel));
  if (missing.length) {
    flags.push({ code: "missing_fields", reason: `Missing ${plural(missing.length, "core field")}: ${missing.join(", ")}.` });
  }
  if (notes.unknownSeverityWords.length) {
    const words = [...new Set(notes.unknownSeverityWords.map((word) => (word === null ? "none given" : `"${word}"`)))];
    flags.push({
      code: "unknown_severity",
      reason: `${plural(notes.unknownSeverityWords.length, "risk")} without a recognised severity (${words.join(", ")}), shown as medium.`,
    });
  }
  const problems = canonical.clean_state ?? [];
  if (problems.length) {
    flags.push({
      code: "dirty_state",
      reason: `Clean-state check found ${plural(problems.length, "blocking problem")}: ${problems
        .map((problem) => problem.detail)
        .join("; ")}.`,
    });
  }
  const failure = inlineVerdictFailure(canonical.verdict);
  if (failure) flags.push({ code: "verdict_failed", reason: `Verdict failed: ${failure}.` });
  if (!canonical.verdict_pointer?.length && !canonical.verdict) {
    flags.push({ code: "verdict_missing", reason: "No verdict pointer: nothing says whether the work was verified." });
  }
  const questions = canonical.questions_for_human ?? [];
  if (questions.length) {
    const blocking = questions.filter((question) => question.blocking).length;
    flags.push({
      code: "open_questions",
      reason: `${plural(questions.length, "question")} for a person${blocking ? `, ${blocking} blocking` : ""}.`,
    });
  }
  if (notes.unreadableClock !== null) {
    flags.push({
      code: "clock_skew",
      reason: `Producer time ${notes.unreadableClock} is not a real date (epoch milliseconds where seconds are expected?).`,
    });
  } else if (notes.createdAtMs !== null) {
    const ahead = notes.createdAtMs - receivedAtMs;
    if (ahead > CLOCK_SKEW_MS) {
      flags.push({ code: "clock_skew", reason: `Producer clock is ${describeDuration(ahead)} ahead of Baton's.` });
    } else if (notes.createdAtMs < EARLIEST_SANE_MS) {
      flags.push({ code: "clock_skew", reason: `Producer clock says ${new Date(notes.createdAtMs).toISOString()}, before 2000.` });
    }
  }
  if (notes.mappedFrom) flags.push({ code: "mapped_from", reason: describeMapping(notes.mappedFrom) });
  return flags;
}
