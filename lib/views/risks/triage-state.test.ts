import { describe, expect, it } from "vitest";
import { needsAttention, riskState, type StoredTriage, triageBlocker } from "./triage-state";

const at = (iso: string) => new Date(iso);
const triage = (overrides: Partial<StoredTriage>): StoredTriage => ({
  state: "acknowledged",
  snoozedUntil: null,
  severityAtTriage: "high",
  updatedAt: at("2026-11-01T10:00:00Z"),
  ...overrides,
});
const now = at("2026-11-10T00:00:00Z");

describe("riskState", () => {
  it("is open without triage, and keeps an acknowledgement across newer sightings", () => {
    expect(riskState(null, { severity: "low", lastSeenAt: now }, now)).toBe("open");
    expect(riskState(triage({}), { severity: "critical", lastSeenAt: now }, now)).toBe("acknowledged");
  });

  it("regresses a resolved risk only when a version that arrived after the resolution carries it", () => {
    const resolved = triage({ state: "resolved" });
    expect(riskState(resolved, { severity: "high", lastSeenAt: at("2026-11-01T09:59:59Z") }, now)).toBe("resolved");
    expect(riskState(resolved, { severity: "high", lastSeenAt: at("2026-11-01T10:00:00Z") }, now)).toBe("resolved");
    expect(riskState(resolved, { severity: "high", lastSeenAt: at("2026-11-01T10:00:01Z") }, now)).toBe("regressed");
  });

  it("ends a dated snooze at its date", () => {
    const snoozed = triage({ state: "snoozed", snoozedUntil: at("2026-11-10T00:00:00Z") });
    expect(riskState(snoozed, { severity: "high", lastSeenAt: now }, at("2026-11-09T23:59:59Z"))).toBe("snoozed");
    expect(riskState(snoozed, { severity: "high", lastSeenAt: now }, now)).toBe("open");
  });

  it("ends a snooze-until-the-severity-rises only when it rises above the snoozed severity", () => {
    const snoozed = triage({ state: "snoozed", severityAtTriage: "medium" });
    expect(riskState(snoozed, { severity: "low", lastSeenAt: now }, now)).toBe("snoozed");
    expect(riskState(snoozed, { severity: "medium", lastSeenAt: now }, now)).toBe("snoozed");
    expect(riskState(snoozed, { severity: "high", lastSeenAt: now }, now)).toBe("open");
  });

  it("needs a person for open and regressed risks only", () => {
    expect(["open", "acknowledged", "resolved", "snoozed", "regressed"].filter((state) => needsAttention(state as never))).toEqual(["open", "regressed"]);
  });
});

describe("triageBlocker", () => {
  it("disables an action only when every risk is already in its state, and says so", () => {
    const acknowledged = { states: ["acknowledged" as const] };
    const mixed = { states: ["open" as const, "acknowledged" as const] };
    expect(triageBlocker("acknowledged", [acknowledged, acknowledged])).toBe("All 2 are already acknowledged.");
    expect(triageBlocker("acknowledged", [acknowledged])).toBe("It is already acknowledged.");
    expect(triageBlocker("acknowledged", [acknowledged, mixed])).toBeNull();
    expect(triageBlocker("resolved", [acknowledged])).toBeNull();
    expect(triageBlocker("snoozed", [])).toBe("No risk is selected or current.");
  });
});
