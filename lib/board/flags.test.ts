import { describe, expect, it } from "vitest";
import { cardFlags, type CardFlagInput } from "./flags";

const base: CardFlagInput = {
  stored: [
    { code: "open_questions", reason: "1 question for a person" },
    { code: "missing_fields", reason: "Missing: summary" },
  ],
  unansweredQuestions: 1,
  watchdog: [],
  work: [],
  verdict: { state: "pass", reasons: ["verification passed"] },
  stale: false,
  staleHours: 24,
};
const codes = (input: Partial<CardFlagInput>) => cardFlags({ ...base, ...input }).map((flag) => flag.code);

describe("cardFlags, the one source of a card's flags (docs/decisions/052-one-source-of-flags.md)", () => {
  it("keeps the stored lint flags, and drops open_questions once every question is answered", () => {
    expect(codes({})).toEqual(["open_questions", "missing_fields"]);
    expect(codes({ unansweredQuestions: 0 })).toEqual(["missing_fields"]);
  });

  it("adds the watchdog's findings, then the verdict read, then stale", () => {
    expect(
      codes({
        watchdog: [{ code: "duplicate_topic", reason: "same topic" }],
        verdict: { state: "fail", reasons: ["verification did not pass"] },
        stale: true,
      }),
    ).toEqual(["open_questions", "missing_fields", "duplicate_topic", "verdict_failed", "stale"]);
    expect(codes({ verdict: { state: "missing", reasons: ["verification x: verdict not sent"] } })).toContain("verdict_missing");
  });

  it("never repeats a verdict flag the packet already carries", () => {
    const stored = [...base.stored, { code: "verdict_failed" as const, reason: "inline verdict failed" }];
    expect(codes({ stored, verdict: { state: "fail", reasons: ["inline"] } }).filter((code) => code === "verdict_failed")).toHaveLength(1);
  });
});
