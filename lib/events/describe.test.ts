import { describe, expect, it } from "vitest";
import { describeLedgerEvent } from "./describe";

const say = (kind: string, data: Record<string, unknown> = {}) => describeLedgerEvent({ kind: kind as never, data });

describe("describeLedgerEvent", () => {
  it("says what happened to a packet", () => {
    expect(say("packet_received", { source: "http" })).toBe("packet received from http");
    expect(say("packet_received", { source: "folder", superseded_on_arrival: true })).toBe(
      "packet received from folder (older than the active one: kept as history)",
    );
    expect(say("packet_received", { source: "http", secrets_redacted: 3, secret_kinds: ["jwt"] })).toBe("packet received from http; 3 secrets redacted");
    expect(say("packet_received", { source: "file", secrets_redacted: 1 })).toBe("packet received from file; 1 secret redacted");
    expect(say("packet_superseded")).toBe("packet superseded by a newer one");
  });

  it("says what people decided", () => {
    expect(say("human_approved", { note: "ship it", revision: 2 })).toBe("approved the next action: ship it (revision 2)");
    expect(say("human_intervened", { question: "Why revert?", revision: 1 })).toBe('intervened: "Why revert?" (revision 1)');
    expect(say("human_answered", { answers: [{ question_id: "q1", answer: "yes" }], revision: 3 })).toBe('answered q1: "yes" (revision 3)');
  });

  it("says what happened to risks, sessions and staleness", () => {
    expect(say("risk_acknowledged", { detail: "refunds may be sent twice", severity: "high" })).toBe('acknowledged the risk "refunds may be sent twice" (high)');
    expect(say("risk_snoozed", { detail: "slow query", severity: "low", snoozed_until: null })).toBe('snoozed the risk "slow query" (low) until its severity rises');
    expect(say("risk_regressed", { detail: "slow query" })).toBe('a resolved risk came back "slow query"');
    expect(say("session_started", { note: null })).toBe("agent session started");
    expect(say("session_ended", { note: "done for today" })).toBe("agent session ended: done for today");
    expect(say("thread_stale", { stale_hours: 24 })).toBe("thread went stale: nothing new for more than 24 h");
  });

  it("spells out a kind it has no words for, and never prints undefined", () => {
    expect(say("token_created")).toBe("token created");
    expect(say("risk_resolved")).toBe("resolved the risk");
    expect(say("thread_archived")).toBe("thread archived: ");
  });
});
