import { describe, expect, it } from "vitest";
import type { CanonicalPacket } from "./canonical";
import { CLOCK_SKEW_MS, FLAG_CODES, inlineVerdictFailure, lintPacket, REVIEW_PASS_TOTAL } from "./lint";
import type { NormaliseNotes } from "./normalise";
import { preparePacket } from "./prepare";

const RECEIVED_AT = Date.UTC(2026, 10, 29, 8, 0, 0);
const HOUR = 3_600_000;

/** A packet with all seven core fields, a passing verdict and nothing to flag. */
const CLEAN = {
  task_id: "T-1",
  summary: "did the thing",
  changed_files: ["a.ts"],
  commands_run: [{ command: "npm test", exit_code: 0 }],
  failed_attempts: [],
  open_risks: [{ severity: "low", detail: "minor thing" }],
  next_action: "ship it",
  verdict_pointer: { verdict: "outputs/verification/T-1.json", review: "outputs/review/T-1.json" },
  verdict: { passed: true, review_total: 9, review_verdict: "pass" },
  clean_state: [],
  questions_for_human: [],
  created_at: "2026-11-29T07:00:00Z",
};

const flagsOf = (overrides: Record<string, unknown>, receivedAt = RECEIVED_AT) =>
  preparePacket({ ...CLEAN, ...overrides }, receivedAt).flags;
const codesOf = (overrides: Record<string, unknown>, receivedAt = RECEIVED_AT) =>
  flagsOf(overrides, receivedAt).map((flag) => flag.code);
const without = (...keys: string[]) => Object.fromEntries(keys.map((key) => [key, undefined]));

describe("clean packets", () => {
  it("get no flags", () => {
    expect(flagsOf({})).toEqual([]);
  });

  it("get no flags with only the seven core fields", () => {
    const minimal = {
      summary: "s",
      changed_files: [],
      commands_run: [],
      failed_attempts: [],
      open_risks: [],
      next_action: { action: "next" },
      verdict_pointer: "outputs/verification/x.json",
    };
    expect(preparePacket(minimal, RECEIVED_AT).flags).toEqual([]);
  });

  it("the flag codes are the contract's", () => {
    expect([...FLAG_CODES]).toEqual([
      "missing_next_action",
      "missing_fields",
      "unknown_severity",
      "dirty_state",
      "verdict_failed",
      "verdict_missing",
      "open_questions",
      "clock_skew",
      "stale",
      "duplicate_topic",
      "commit_regressed",
      "ci_failing",
      "changes_requested",
    ]);
  });
});

describe("missing_next_action", () => {
  it.each([
    ["absent", without("next_action")],
    ["null", { next_action: null }],
    ["empty", { next_action: "" }],
    ["blank", { next_action: "   " }],
    ["an object with a blank action", { next_action: { action: " ", owner: "me" } }],
    ["the sentinel", { next_action: "no next_action recorded; needs human" }],
  ])("flags a next_action that is %s", (_, overrides) => {
    expect(codesOf(overrides)).toContain("missing_next_action");
  });

  it("gives the sentinel its own reason and does not count it as a missing field", () => {
    const flags = flagsOf({ next_action: "no next_action recorded; needs human" });
    expect(flags).toEqual([
      {
        code: "missing_next_action",
        reason: 'next_action is the generator\'s placeholder "needs human": the agent recorded no next step.',
      },
    ]);
  });

  it("does not flag a real next action", () => {
    expect(codesOf({ next_action: { description: "do x" } })).not.toContain("missing_next_action");
  });
});

describe("missing_fields", () => {
  it("names every absent core field, in contract order", () => {
    const flags = flagsOf(without("changed_files", "verdict_pointer", "commands_run"));
    expect(flags.find((flag) => flag.code === "missing_fields")?.reason).toBe(
      "Missing 3 core fields: changed_files, commands_run, verdict_pointer.",
    );
  });

  it("counts a null core field as absent", () => {
    expect(flagsOf({ failed_attempts: null }).find((flag) => flag.code === "missing_fields")?.reason).toBe(
      "Missing 1 core field: failed_attempts.",
    );
  });

  it("does not count an empty array as missing", () => {
    expect(codesOf({ open_risks: [], failed_attempts: [] })).not.toContain("missing_fields");
  });
});

describe("unknown_severity", () => {
  it("flags a risk with no severity", () => {
    expect(codesOf({ open_risks: [{ detail: "x" }] })).toEqual(["unknown_severity"]);
  });

  it("flags a risk with an unrecognised severity word", () => {
    const flag = flagsOf({ open_risks: [{ severity: "spicy", detail: "x" }] })[0];
    expect(flag).toEqual({ code: "unknown_severity", reason: '1 risk without a recognised severity ("spicy"), shown as medium.' });
  });

  it("flags a bare-string risk", () => {
    expect(codesOf({ open_risks: ["x"] })).toEqual(["unknown_severity"]);
  });
});

describe("dirty_state", () => {
  it("flags clean_state listing problems, as strings or {check, detail}", () => {
    const flag = flagsOf({ clean_state: ["stash left behind", { check: "tmp", detail: "tmp/ not removed" }] })[0];
    expect(flag).toEqual({
      code: "dirty_state",
      reason: "Clean-state check found 2 blocking problems: stash left behind; tmp/ not removed.",
    });
  });

  it("flags {blocking: [...]} with problems", () => {
    expect(codesOf({ clean_state: { blocking: ["x"] } })).toEqual(["dirty_state"]);
  });

  it("does not flag an empty list, an empty blocking list, or blank entries", () => {
    expect(codesOf({ clean_state: [] })).toEqual([]);
    expect(codesOf({ clean_state: { blocking: [] } })).toEqual([]);
    expect(codesOf({ clean_state: ["", "  "] })).toEqual([]);
  });
});

describe("verdict_failed", () => {
  it.each([
    [{ passed: false }, "Verdict failed: verification did not pass."],
    [{ review_verdict: "soft_fail" }, "Verdict failed: review verdict is soft_fail."],
    [{ review_verdict: "hard_fail" }, "Verdict failed: review verdict is hard_fail."],
    [{ review_total: 6 }, "Verdict failed: review total 6/10 is below 7."],
    [{ review_total: 6.9 }, "Verdict failed: review total 6.9/10 is below 7."],
    [{ review_total: 0 }, "Verdict failed: review total 0/10 is below 7."],
    [
      { passed: false, review_total: 3, review_verdict: "hard_fail" },
      "Verdict failed: verification did not pass; review verdict is hard_fail; review total 3/10 is below 7.",
    ],
  ])("flags %j", (verdict, reason) => {
    expect(flagsOf({ verdict })).toEqual([{ code: "verdict_failed", reason }]);
  });

  it.each([
    [{ passed: true }],
    [{ review_total: REVIEW_PASS_TOTAL }],
    [{ review_total: 10, review_verdict: "pass" }],
    [{}],
  ])("does not flag %j", (verdict) => {
    expect(codesOf({ verdict })).toEqual([]);
  });

  it("inlineVerdictFailure is null without a verdict", () => {
    expect(inlineVerdictFailure(undefined)).toBeNull();
    expect(REVIEW_PASS_TOTAL).toBe(7);
  });
});

describe("verdict_missing", () => {
  it("flags a packet with neither a verdict pointer nor an inline verdict", () => {
    expect(flagsOf(without("verdict_pointer", "verdict"))).toEqual([
      { code: "missing_fields", reason: "Missing 1 core field: verdict_pointer." },
      { code: "verdict_missing", reason: "No verdict pointer: nothing says whether the work was verified." },
    ]);
  });

  it("flags an empty verdict pointer list", () => {
    expect(codesOf({ verdict_pointer: [], verdict: undefined })).toEqual(["verdict_missing"]);
  });

  it("does not flag a pointer without an inline verdict", () => {
    expect(codesOf({ verdict: undefined })).toEqual([]);
  });

  it("does not flag an inline verdict without a pointer (only missing_fields)", () => {
    expect(codesOf({ verdict_pointer: undefined })).toEqual(["missing_fields"]);
  });
});

describe("open_questions", () => {
  it("flags questions for a person, counting blocking ones", () => {
    const flags = flagsOf({
      questions_for_human: ["which db?", { question: "ok to delete?", blocking: true }, { question: "name?", blocking: false }],
    });
    expect(flags).toEqual([{ code: "open_questions", reason: "3 questions for a person, 1 blocking." }]);
  });

  it("words one non-blocking question", () => {
    expect(flagsOf({ questions_for_human: ["which db?"] })).toEqual([{ code: "open_questions", reason: "1 question for a person." }]);
  });

  it("does not flag an empty list", () => {
    expect(codesOf({ questions_for_human: [] })).toEqual([]);
  });
});

describe("clock_skew", () => {
  const at = (ms: number) => new Date(ms).toISOString();

  it("flags a producer clock more than 24 h ahead", () => {
    expect(flagsOf({ created_at: at(RECEIVED_AT + CLOCK_SKEW_MS + 1000) })).toEqual([
      { code: "clock_skew", reason: "Producer clock is 24 hours ahead of Baton's." },
    ]);
    expect(flagsOf({ created_at: at(RECEIVED_AT + 3 * 24 * HOUR) })[0]?.reason).toBe("Producer clock is 3 days ahead of Baton's.");
  });

  it("does not flag up to exactly 24 h ahead", () => {
    expect(CLOCK_SKEW_MS).toBe(24 * HOUR);
    expect(codesOf({ created_at: at(RECEIVED_AT + CLOCK_SKEW_MS) })).toEqual([]);
    expect(codesOf({ created_at: at(RECEIVED_AT + 23 * HOUR) })).toEqual([]);
  });

  it("does not flag a packet made days before it was received", () => {
    expect(codesOf({ created_at: at(RECEIVED_AT - 30 * 24 * HOUR) })).toEqual([]);
  });

  it("flags a producer clock before the year 2000", () => {
    expect(flagsOf({ created_at: undefined, timestamp: 0 })).toEqual([
      { code: "clock_skew", reason: "Producer clock says 1970-01-01T00:00:00.000Z, before 2000." },
    ]);
  });

  it("reads epoch-seconds timestamps for the comparison", () => {
    const aheadSeconds = (RECEIVED_AT + 2 * 24 * HOUR) / 1000;
    expect(codesOf({ created_at: undefined, timestamp: aheadSeconds })).toEqual(["clock_skew"]);
    expect(codesOf({ created_at: undefined, timestamp: String(RECEIVED_AT / 1000) })).toEqual([]);
  });

  it("does not flag a packet with no producer clock", () => {
    expect(codesOf({ created_at: undefined })).toEqual([]);
  });
});

describe("lintPacket directly", () => {
  const notes = (overrides: Partial<NormaliseNotes> = {}): NormaliseNotes => ({
    nextActionSentinel: false,
    unknownSeverityWords: [],
    createdAtMs: null,
    unreadableClock: null,
    ...overrides,
  });
  const bare: CanonicalPacket = { schema_version: 1, summary: "s", extra: {} };

  it("reports every applicable flag in a stable order", () => {
    const canonical: CanonicalPacket = {
      ...bare,
      clean_state: [{ detail: "dirty" }],
      verdict: { passed: false },
      questions_for_human: [{ id: "q0", question: "?", blocking: true }],
    };
    const flags = lintPacket(canonical, notes({ unknownSeverityWords: [null, "x", "x"], createdAtMs: RECEIVED_AT + 49 * HOUR }), RECEIVED_AT);
    expect(flags.map((flag) => flag.code)).toEqual([
      "missing_next_action",
      "missing_fields",
      "unknown_severity",
      "dirty_state",
      "verdict_failed",
      "open_questions",
      "clock_skew",
    ]);
    expect(flags.find((flag) => flag.code === "unknown_severity")?.reason).toBe(
      '3 risks without a recognised severity (none given, "x"), shown as medium.',
    );
    expect(flags.find((flag) => flag.code === "missing_fields")?.reason).toBe(
      "Missing 6 core fields: changed_files, commands_run, failed_attempts, open_risks, next_action, verdict_pointer.",
    );
    expect(flags.find((flag) => flag.code === "clock_skew")?.reason).toBe("Producer clock is 2 days ahead of Baton's.");
  });

  it("never adds stale (the board does)", () => {
    const flags = lintPacket(bare, notes({ createdAtMs: Date.UTC(2001, 0, 1) }), RECEIVED_AT);
    expect(flags.map((flag) => flag.code)).not.toContain("stale");
  });
});

describe("unreadable producer clocks", () => {
  it("flags epoch milliseconds sent where seconds are expected", () => {
    const { flags, canonical } = preparePacket({ summary: "s", timestamp: 1795856220441 }, Date.UTC(2026, 10, 29));
    expect(canonical.created_at).toBeUndefined();
    expect(flags.find((flag) => flag.code === "clock_skew")?.reason).toBe(
      "Producer time 1795856220441 is not a real date (epoch milliseconds where seconds are expected?).",
    );
  });
});

describe("review verdict words", () => {
  it("matches soft_fail and hard_fail in any case", () => {
    const { flags } = preparePacket({ summary: "s", verdict: { review_verdict: "SOFT_FAIL" } }, Date.UTC(2026, 10, 29));
    expect(flags.map((flag) => flag.code)).toContain("verdict_failed");
  });
});
