import { describe, expect, it } from "vitest";
import type { FlagCode } from "../contract/lint";
import type { Severity } from "../contract/severity";
import { columnOrder, compareNeedsYou, groupNeedsYou, needsGroupOf, sortColumn, type NeedsGroup } from "./needs-groups";

interface Shape {
  key?: string;
  flags?: FlagCode[];
  unanswered?: number;
  severe?: number;
  regressed?: number;
  severity?: Severity | null;
  updated?: string;
}

function card({ key = "k", flags = [], unanswered = 0, severe = 0, regressed = 0, severity = null, updated = "2026-11-29T12:00:00Z" }: Shape) {
  return {
    key,
    updated_at: updated,
    attention: { unacknowledged_severe: severe, regressed },
    active_packet: {
      flags: flags.map((code) => ({ code, reason: code })),
      highest_severity: severity,
      human: { revision: 0, decision: null, unanswered_questions: unanswered },
    },
  };
}

describe("needsGroupOf", () => {
  const cases: [string, Shape, NeedsGroup][] = [
    ["an unanswered question", { flags: ["open_questions"], unanswered: 1 }, "question"],
    ["a question with a critical risk too: the question first", { flags: ["open_questions"], unanswered: 2, severe: 1 }, "question"],
    ["questions all answered, a critical risk left", { flags: ["open_questions"], unanswered: 0, severe: 1 }, "severe_risk"],
    ["a critical risk and a failed verdict: the risk first", { flags: ["verdict_failed"], severe: 1 }, "severe_risk"],
    ["a failed verdict", { flags: ["verdict_failed", "dirty_state"] }, "verdict_failed"],
    ["a resolved risk that came back", { regressed: 1, flags: ["missing_next_action"] }, "went_back"],
    ["a commit that went back", { flags: ["commit_regressed"] }, "went_back"],
    ["no next action", { flags: ["missing_next_action"] }, "incomplete"],
    ["a dirty workbench", { flags: ["dirty_state"] }, "incomplete"],
    ["the same topic twice", { flags: ["duplicate_topic"] }, "incomplete"],
    ["stale, whatever it waits for", { flags: ["open_questions", "stale"], unanswered: 1 }, "stale"],
  ];
  for (const [name, shape, group] of cases) {
    it(name, () => expect(needsGroupOf(card(shape))).toBe(group));
  }
});

describe("Needs you's order", () => {
  it("puts groups in urgency order, then the most severe, then the newest, and cuts them into groups with their cards", () => {
    const cards = [
      card({ key: "stale", flags: ["stale", "open_questions"], unanswered: 1, severity: "critical" }),
      card({ key: "dirty-low", flags: ["dirty_state"], severity: "low" }),
      card({ key: "risk-old", severe: 1, severity: "high", updated: "2026-11-28T12:00:00Z" }),
      card({ key: "risk-new", severe: 1, severity: "high", updated: "2026-11-29T12:00:00Z" }),
      card({ key: "risk-critical", severe: 1, severity: "critical", updated: "2026-11-27T12:00:00Z" }),
      card({ key: "question-none", flags: ["open_questions"], unanswered: 1, severity: null }),
      card({ key: "verdict", flags: ["verdict_failed"], severity: "critical" }),
    ];
    const sorted = [...cards].sort(compareNeedsYou);
    expect(sorted.map((c) => c.key)).toEqual(["question-none", "risk-critical", "risk-new", "risk-old", "verdict", "dirty-low", "stale"]);
    expect(groupNeedsYou(sorted).map((group) => [group.id, group.cards.length])).toEqual([
      ["question", 1],
      ["severe_risk", 3],
      ["verdict_failed", 1],
      ["incomplete", 1],
      ["stale", 1],
    ]);
  });
});

describe("sortColumn", () => {
  it("orders a column as columnOrder does, in Needs you and elsewhere", () => {
    const shapes: Shape[] = [];
    const severities: (Severity | null)[] = [null, "low", "high", "critical"];
    const flagSets: FlagCode[][] = [[], ["stale"], ["open_questions"], ["verdict_failed"], ["commit_regressed"], ["missing_next_action"]];
    for (let n = 0; n < 48; n++) {
      shapes.push({
        key: `k${(n * 17) % 48}`,
        flags: flagSets[n % flagSets.length],
        unanswered: n % 5 === 0 ? 1 : 0,
        severe: n % 7 === 0 ? 1 : 0,
        regressed: n % 11 === 0 ? 1 : 0,
        severity: severities[n % severities.length],
        updated: `2026-11-29T12:${String(n % 4).padStart(2, "0")}:00Z`,
      });
    }
    for (const column of ["needs_you", "ready"] as const) {
      const expected = shapes.map(card).sort(columnOrder(column)).map((each) => each.key);
      expect(sortColumn(column, shapes.map(card)).map((each) => each.key)).toEqual(expected);
    }
  });
});
