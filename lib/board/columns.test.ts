import { describe, expect, it } from "vitest";
import { decideColumn, type Column, type ColumnInput } from "./columns";

const HOUR = 3_600_000;
const NOW = Date.parse("2026-11-29T12:00:00Z");
const base: ColumnInput = {
  now: NOW,
  staleMs: 24 * HOUR,
  activeReceivedAt: NOW - 2 * HOUR,
  flags: [],
  unacknowledgedSevere: 0,
  regressedRisks: 0,
  decision: null,
  lastSession: null,
};

const cases: { name: string; input: Partial<ColumnInput>; column: Column; stale?: boolean }[] = [
  // One case per rule.
  { name: "a clean packet is Ready", input: {}, column: "ready" },
  { name: "open questions need a person", input: { flags: ["open_questions"] }, column: "needs_you" },
  { name: "a missing next action needs a person", input: { flags: ["missing_next_action"] }, column: "needs_you" },
  { name: "a dirty workbench needs a person", input: { flags: ["dirty_state"] }, column: "needs_you" },
  { name: "a failed verdict needs a person", input: { flags: ["verdict_failed"] }, column: "needs_you" },
  { name: "CI failing on the branch needs a person", input: { flags: ["ci_failing"] }, column: "needs_you" },
  { name: "a review asking for changes needs a person", input: { flags: ["changes_requested"] }, column: "needs_you" },
  { name: "CI failing after an intervention stays Intervened", input: { flags: ["ci_failing"], decision: { kind: "intervened", at: NOW - HOUR } }, column: "intervened" },
  { name: "an unacknowledged critical or high risk needs a person", input: { unacknowledgedSevere: 1 }, column: "needs_you" },
  { name: "a regressed risk of any severity needs a person", input: { regressedRisks: 1 }, column: "needs_you" },
  { name: "flags that need nobody keep it Ready", input: { flags: ["missing_fields", "unknown_severity", "verdict_missing", "clock_skew"] }, column: "ready" },
  { name: "an approval moves it to Approved", input: { decision: { kind: "approved", at: NOW - HOUR } }, column: "approved" },
  { name: "an intervention moves it to Intervened", input: { decision: { kind: "intervened", at: NOW - HOUR } }, column: "intervened" },
  { name: "a heartbeat after the packet is Running", input: { lastSession: { kind: "heartbeat", at: NOW - HOUR } }, column: "running" },
  { name: "a session start after the packet is Running", input: { lastSession: { kind: "session_started", at: NOW - HOUR } }, column: "running" },
  { name: "a Ready card with nothing new for a day is Stale", input: { activeReceivedAt: NOW - 25 * HOUR }, column: "stale", stale: true },
  // Precedence.
  { name: "Running beats Needs you", input: { flags: ["open_questions"], lastSession: { kind: "heartbeat", at: NOW - HOUR } }, column: "running" },
  { name: "Running beats a decision", input: { decision: { kind: "approved", at: NOW - 1.5 * HOUR }, lastSession: { kind: "heartbeat", at: NOW - HOUR } }, column: "running" },
  { name: "a heartbeat before the packet is not Running", input: { lastSession: { kind: "heartbeat", at: NOW - 3 * HOUR } }, column: "ready" },
  { name: "an ended session is not Running", input: { lastSession: { kind: "session_ended", at: NOW - HOUR } }, column: "ready" },
  { name: "a heartbeat older than the threshold is not Running, and the card is Stale", input: { activeReceivedAt: NOW - 30 * HOUR, lastSession: { kind: "heartbeat", at: NOW - 25 * HOUR } }, column: "stale", stale: true },
  { name: "a decision beats Needs you (the person has acted)", input: { flags: ["open_questions"], decision: { kind: "intervened", at: NOW - HOUR } }, column: "intervened" },
  { name: "a decision beats a regressed risk (the person has acted)", input: { regressedRisks: 1, decision: { kind: "approved", at: NOW - HOUR } }, column: "approved" },
  { name: "Needs you is never Stale", input: { flags: ["dirty_state"], activeReceivedAt: NOW - 72 * HOUR }, column: "needs_you", stale: true },
  { name: "an old Approved card is Stale", input: { activeReceivedAt: NOW - 50 * HOUR, decision: { kind: "approved", at: NOW - 26 * HOUR } }, column: "stale", stale: true },
  { name: "an old Intervened card is Stale", input: { activeReceivedAt: NOW - 50 * HOUR, decision: { kind: "intervened", at: NOW - 30 * HOUR } }, column: "stale", stale: true },
  { name: "a recent decision keeps an old packet fresh", input: { activeReceivedAt: NOW - 50 * HOUR, decision: { kind: "approved", at: NOW - HOUR } }, column: "approved" },
  { name: "exactly at the threshold is not yet Stale", input: { activeReceivedAt: NOW - 24 * HOUR }, column: "ready" },
  { name: "the threshold is a setting", input: { activeReceivedAt: NOW - 2 * HOUR, staleMs: HOUR }, column: "stale", stale: true },
];

describe("decideColumn", () => {
  it.each(cases)("$name", ({ input, column, stale }) => {
    const decision = decideColumn({ ...base, ...input });
    expect(decision.column).toBe(column);
    expect(decision.stale).toBe(stale ?? false);
    expect(decision.reason.length).toBeGreaterThan(0);
  });

  it("names what needs a person", () => {
    expect(decideColumn({ ...base, flags: ["open_questions", "dirty_state"], unacknowledgedSevere: 2 }).reason).toBe(
      "needs a person: open_questions, dirty_state, 2 critical/high risk(s) not acknowledged",
    );
    expect(decideColumn({ ...base, unacknowledgedSevere: 1, regressedRisks: 2 }).reason).toBe(
      "needs a person: 1 critical/high risk(s) not acknowledged, 2 resolved risk(s) came back",
    );
  });
});
