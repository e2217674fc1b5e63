import type { BoardCardDto } from "@/lib/board/dto";
import { FLAG_TITLES, NEEDS_PERSON_FLAGS, type FlagCode } from "@/lib/contract/lint";

/** "1 question", "2 questions": the board never says "question(s)". */
export const plural = (count: number, word: string, many = `${word}s`) => `${count} ${count === 1 ? word : many}`;

export interface CardReason {
  code: FlagCode | "severe_risks" | "regressed_risks";
  text: string;
  /** The details, for the chip's title. */
  detail?: string;
}

/**
 * Why a card needs a person, in plain words, from the same inputs as the column rule
 * (lib/board/columns.ts): the needs-a-person flags and the risks nobody triaged.
 */
export function cardReasons(card: BoardCardDto): CardReason[] {
  const packet = card.active_packet;
  const reasons: CardReason[] = [];
  const unanswered = packet.human.unanswered_questions;
  for (const flag of packet.flags) {
    if (!NEEDS_PERSON_FLAGS.has(flag.code)) continue;
    const text = flag.code === "open_questions" && unanswered > 0 ? `${plural(unanswered, "question")} for you` : FLAG_TITLES[flag.code];
    reasons.push({ code: flag.code, text, detail: flagReason(flag.code, flag.reason) });
  }
  const { unacknowledged_severe: severe, regressed } = card.attention;
  if (severe > 0) reasons.push({ code: "severe_risks", text: `${plural(severe, "critical/high risk")} to triage` });
  if (regressed > 0) reasons.push({ code: "regressed_risks", text: `${plural(regressed, "resolved risk")} came back` });
  return reasons;
}

/** A flag's reason without its title repeated ("Verdict failed: Verdict failed: …" read twice). */
export function flagReason(code: FlagCode, reason: string): string {
  const title = `${FLAG_TITLES[code]}: `;
  return reason.startsWith(title) ? reason.slice(title.length) : reason;
}
