import { describe, expect, it } from "vitest";
import { normaliseRiskDetail, riskFingerprint } from "./fingerprint";
import { preparePacket } from "./prepare";
import { itTransforms } from "@/testing/text-cases";

describe("normaliseRiskDetail", () => {
  itTransforms(normaliseRiskDetail, [
    ["lowercases and collapses whitespace", [["  Dead-Letter  path\n\tNEVER exercised ", "dead-letter path never exercised"]]],
    ["replaces digits-only tokens", [["prod plan shows 3 resources to destroy", "prod plan shows <n> resources to destroy"], ["review total 6 below 7", "review total <n> below <n>"]]],
    ["keeps digits that are part of a word or a version", [["v2 api and r1 and 1.5 and sha256", "v2 api and r1 and 1.5 and sha256"]]],
    ["replaces quoted paths, whatever the quote", [[`breaks "src/a/b.ts", 'lib/c.py' and \`x.json\``, "breaks <path>, <path> and <path>"]]],
    ["keeps quoted words that are not paths", [["grep for 'user-settings'", "grep for 'user-settings'"]]],
    ["keeps unquoted paths", [["off-scope: docs/billing.md", "off-scope: docs/billing.md"]]],
  ]);
});

describe("riskFingerprint", () => {
  const fp = riskFingerprint;

  it("is 24 hex characters", () => {
    expect(fp("anything")).toMatch(/^[0-9a-f]{24}$/);
  });

  itTransforms(fp, [
    ["is the same across case and whitespace changes", [["Signature window is too wide", fp("  signature   WINDOW is\ntoo wide ")]]],
    ["is the same across changed counts", [["3 tests still failing in billing", fp("12 tests still failing in billing")], ["router.ts has grown past 300 lines", fp("router.ts has grown past 450 lines")]]],
    ["is the same across changed quoted paths", [['flaky test in "test/a.spec.ts"', fp("flaky test in 'test/b/c.spec.ts'")]]],
    ["combines all normalisations", [['  2 Flaky tests in "test/a.spec.ts"', fp("17 flaky   TESTS in `e2e/login.spec.ts`")]]],
  ]);

  it("differs for different risks", () => {
    const fingerprints = [
      "dead-letter path never exercised",
      "signature tolerance window is 5 minutes",
      "router.ts has grown past 300 lines",
      "router.js has grown past 300 lines",
      "v1 endpoint removed",
      "v2 endpoint removed",
      "flaky test in 'user-settings'",
      "flaky test in 'admin-settings'",
    ].map((detail) => fp(detail));
    expect(new Set(fingerprints).size).toBe(fingerprints.length);
  });

  it("is stored on each canonical risk and matches across packets", () => {
    const a = preparePacket({ open_risks: [{ severity: "high", detail: "3 Migrations pending in 'db/migrate'" }] }, 0);
    const b = preparePacket({ open_risks: ["5 migrations  pending in \"db/schema\""] }, 0);
    const c = preparePacket({ open_risks: ["migrations pending"] }, 0);
    expect(a.canonical.open_risks?.[0]?.fingerprint).toBe(fp("3 Migrations pending in 'db/migrate'"));
    expect(a.canonical.open_risks?.[0]?.fingerprint).toBe(b.canonical.open_risks?.[0]?.fingerprint);
    expect(a.canonical.open_risks?.[0]?.fingerprint).not.toBe(c.canonical.open_risks?.[0]?.fingerprint);
  });
});

describe("digits inside identifiers", () => {
  it("keeps ticket numbers apart while masking counts", () => {
    expect(riskFingerprint("T-014 rounding still red")).not.toBe(riskFingerprint("T-015 rounding still red"));
    expect(riskFingerprint("retried 3 times, then gave up")).toBe(riskFingerprint("retried 5 times, then gave up"));
    expect(normaliseRiskDetail("ends with a count 12.")).toBe("ends with a count <n>.");
  });
});
