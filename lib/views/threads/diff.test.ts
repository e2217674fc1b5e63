import { describe, expect, it } from "vitest";
import { preparePacket } from "../../contract/prepare";
import { diffVersions } from "./diff";

const at = Date.parse("2026-11-29T08:00:00Z");
/** A version holding what the diff compares: its next action, changed files and risks ([severity, detail]). */
const version = (next_action: string, changed_files: string[], risks: [string, string][]) =>
  preparePacket({ thread: "t", next_action, changed_files, open_risks: risks.map(([severity, detail]) => ({ severity, detail })) }, at).canonical;

describe("diffVersions", () => {
  const before = version("write the test", ["a.ts", "b.ts"], [
    ["high", "retries run twice"],
    ["low", "helper is 300 lines"],
    ["medium", "timeout of 30 seconds is a guess"],
  ]);
  const after = version("make the test pass", ["b.ts", "c.ts"], [
    ["critical", "retries run twice"],
    ["medium", "timeout of 45 seconds is a guess"],
    ["info", "docs mention staging"],
  ]);

  it("lists risks added and removed, matched by fingerprint", () => {
    const diff = diffVersions(before, after);
    expect(diff.risks_added).toEqual([{ severity: "info", detail: "docs mention staging" }]);
    expect(diff.risks_removed).toEqual([{ severity: "low", detail: "helper is 300 lines" }]);
  });

  it("reports a changed severity, and treats a reworded count as the same risk", () => {
    const diff = diffVersions(before, after);
    expect(diff.risks_severity_changed).toEqual([{ detail: "retries run twice", before: "high", after: "critical" }]);
    expect(diff.risks_added.map((risk) => risk.detail)).not.toContain("timeout of 45 seconds is a guess");
  });

  it("shows next_action before and after, and the files", () => {
    const diff = diffVersions(before, after);
    expect(diff.next_action).toEqual({ before: "write the test", after: "make the test pass", changed: true });
    expect(diff).toMatchObject({ files_added: ["c.ts"], files_removed: ["a.ts"], files_kept: ["b.ts"] });
  });

  it("finds nothing between a version and itself", () => {
    const diff = diffVersions(after, after);
    expect(diff.risks_added).toEqual([]);
    expect(diff.risks_removed).toEqual([]);
    expect(diff.risks_severity_changed).toEqual([]);
    expect(diff.next_action.changed).toBe(false);
  });
});
