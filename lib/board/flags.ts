import { z } from "zod";
import type { Flag } from "../contract/lint";
import type { VerdictSummaryDto } from "../views/verdict/dto";
import { flagDto } from "../views/threads/dto";

/**
 * The one place a card's flags are decided (docs/decisions/052-one-source-of-flags.md):
 * the lint flags stored at ingest, the verdict read from the reports, the watchdog's
 * findings, the code host's (CI, review) and staleness. The board, the thread page, the packet and thread APIs, the
 * ingest answer and `baton push` all show what this returns, with when it was computed.
 */

export const cardFlagsDto = z.object({
  flags: z.array(flagDto),
  /** When the flags were computed (ISO 8601): the verdict, watchdog and stale flags change with time and files. */
  computed_at: z.iso.datetime(),
});
export type CardFlagsDto = z.infer<typeof cardFlagsDto>;

export interface CardFlagInput {
  /** The lint flags stored with the version at ingest. */
  stored: readonly Flag[];
  /** The version's questions without a person's answer (people's answers drop `open_questions`). */
  unansweredQuestions: number;
  /** The watchdog's findings for the thread (lib/board/watchdog/findings.ts). */
  watchdog: readonly Flag[];
  /** The code host's news that needs a person: CI failing, changes requested (lib/integrations/work-flags.ts). */
  work: readonly Flag[];
  /** The verdict read from the reports and the inline verdict (lib/views/verdict/version.ts). */
  verdict: VerdictSummaryDto;
  /** Nothing new for longer than the threshold (lib/board/columns.ts isStale). */
  stale: boolean;
  staleHours: number;
}

const REASON_MAX = 160;
const brief = (reasons: readonly string[]) => {
  const text = reasons.join("; ");
  return text.length > REASON_MAX ? `${text.slice(0, REASON_MAX - 1)}…` : text;
};

/** A report that failed puts the card in front of a person just as an inline verdict does. */
function verdictFlag(codes: ReadonlySet<string>, verdict: VerdictSummaryDto): Flag | null {
  if (verdict.state === "fail" && !codes.has("verdict_failed")) return { code: "verdict_failed", reason: `Verdict failed: ${brief(verdict.reasons)}` };
  if (verdict.state === "missing" && !codes.has("verdict_missing")) {
    return { code: "verdict_missing", reason: `No verdict could be read: ${brief(verdict.reasons.slice(0, 1))}` };
  }
  return null;
}

export function cardFlags(input: CardFlagInput): Flag[] {
  // Once every question has an answer, the packet no longer waits on one.
  const stored = input.unansweredQuestions === 0 ? input.stored.filter((flag) => flag.code !== "open_questions") : [...input.stored];
  const flags = [...stored, ...input.watchdog, ...input.work];
  const verdict = verdictFlag(new Set(flags.map((flag) => flag.code)), input.verdict);
  if (verdict) flags.push(verdict);
  if (input.stale) flags.push({ code: "stale", reason: `Nothing new for more than ${input.staleHours} h: the agent may have stopped.` });
  return flags;
}
