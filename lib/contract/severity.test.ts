import { describe, expect, it } from "vitest";
import { preparePacket } from "./prepare";
import { highestSeverity, isSeverity, normaliseSeverity, SEVERITIES, severityRank } from "./severity";

// The table from docs/contract.md#severity, written out here (not imported) so that a
// change to the code's table that drifts from the contract fails this test.
const CONTRACT_TABLE: Record<string, string[]> = {
  critical: ["critical", "crit", "blocker", "block", "blocking", "fatal", "p0", "sev0", "sev1"],
  high: ["high", "error", "major", "severe", "p1", "sev2"],
  medium: ["medium", "med", "moderate", "warn", "warning", "p2", "sev3"],
  low: ["low", "minor", "p3", "sev4"],
  info: ["info", "informational", "note", "trivial", "p4"],
};
const CASES = Object.entries(CONTRACT_TABLE).flatMap(([level, words]) => words.map((word) => [word, level] as const));

const upperFirst = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

describe("severity table", () => {
  it("has the five canonical levels, highest first", () => {
    expect(SEVERITIES).toEqual(["critical", "high", "medium", "low", "info"]);
  });

  it.each(CASES)("maps %s to %s", (word, level) => {
    expect(normaliseSeverity(word)).toEqual({ severity: level, known: true });
  });

  it.each(CASES)("maps %s to %s in upper, title and padded case", (word, level) => {
    expect(normaliseSeverity(word.toUpperCase())).toEqual({ severity: level, known: true });
    expect(normaliseSeverity(upperFirst(word))).toEqual({ severity: level, known: true });
    expect(normaliseSeverity(`  ${word}\t`)).toEqual({ severity: level, known: true });
  });

  it.each([["urgent"], ["sev5"], ["p5"], ["blockers"], ["hi"], ["critical!"], [""], ["   "]])(
    "falls back to medium, unknown, for %j",
    (word) => {
      expect(normaliseSeverity(word)).toEqual({ severity: "medium", known: false });
    },
  );

  it("falls back to medium, unknown, for a missing word or a number", () => {
    expect(normaliseSeverity(null)).toEqual({ severity: "medium", known: false });
    expect(normaliseSeverity(undefined)).toEqual({ severity: "medium", known: false });
    expect(normaliseSeverity(1)).toEqual({ severity: "medium", known: false });
    expect(normaliseSeverity(0)).toEqual({ severity: "medium", known: false });
  });

  it("ranks severities so that higher means more severe", () => {
    expect(SEVERITIES.map(severityRank)).toEqual([5, 4, 3, 2, 1]);
    expect(highestSeverity(["low", "info", "high", "medium"])).toBe("high");
    expect(highestSeverity(["info"])).toBe("info");
    expect(highestSeverity([])).toBeNull();
  });

  it("recognises only the canonical level names as severities", () => {
    expect(isSeverity("critical")).toBe(true);
    expect(isSeverity("info")).toBe(true);
    expect(isSeverity("block")).toBe(false);
    expect(isSeverity("Critical")).toBe(false);
    expect(isSeverity(3)).toBe(false);
  });
});

describe("severity in a packet", () => {
  const prepare = (open_risks: unknown[]) => preparePacket({ summary: "s", open_risks }, Date.UTC(2026, 10, 29));

  it("keeps the raw word beside the canonical level and counts risks per level", () => {
    const prepared = prepare([
      { severity: "BLOCKER", detail: "a" },
      { severity: "Sev2", detail: "b" },
      { severity: "p3", detail: "c" },
      { severity: "note", detail: "d" },
    ]);
    expect(prepared.canonical.open_risks?.map((risk) => [risk.severity, risk.severity_raw])).toEqual([
      ["critical", "BLOCKER"],
      ["high", "Sev2"],
      ["low", "p3"],
      ["info", "note"],
    ]);
    expect(prepared.riskCounts).toEqual({ critical: 1, high: 1, medium: 0, low: 1, info: 1 });
    expect(prepared.highestSeverity).toBe("critical");
    expect(prepared.flags.map((flag) => flag.code)).not.toContain("unknown_severity");
  });

  it("turns unknown and missing words into medium and flags unknown_severity naming them", () => {
    const prepared = prepare([
      { severity: "urgent", detail: "a" },
      { detail: "b" },
      { severity: null, detail: "c" },
      "a bare string risk",
      { severity: "high", detail: "d" },
    ]);
    expect(prepared.canonical.open_risks?.map((risk) => [risk.severity, risk.severity_raw])).toEqual([
      ["medium", "urgent"],
      ["medium", null],
      ["medium", null],
      ["medium", null],
      ["high", "high"],
    ]);
    const flag = prepared.flags.find((f) => f.code === "unknown_severity");
    expect(flag?.reason).toBe('4 risks without a recognised severity ("urgent", none given), shown as medium.');
    expect(prepared.riskCounts).toEqual({ critical: 0, high: 1, medium: 4, low: 0, info: 0 });
  });

  it("treats a numeric severity as an unknown word, kept as text", () => {
    const prepared = prepare([{ severity: 2, detail: "a" }]);
    expect(prepared.canonical.open_risks?.[0]).toMatchObject({ severity: "medium", severity_raw: "2" });
    expect(prepared.flags.map((f) => f.code)).toContain("unknown_severity");
  });
});
