import { describe, expect, it } from "vitest";
import { normaliseRiskDetail, riskFingerprint } from "./fingerprint";
import { preparePacket } from "./prepare";

describe("normaliseRiskDetail", () => {
  it("lowercases and collapses whitespace", () => {
    expect(normaliseRiskDetail("  Dead-Letter  path\n\tNEVER exercised ")).toBe("dead-letter path never exercised");
  });

  it("replaces digits-only tokens", () => {
    expect(normaliseRiskDetail("prod plan shows 3 resources to destroy")).toBe("prod plan shows <n> resources to destroy");
    expect(normaliseRiskDetail("review total 6 below 7")).toBe("review total <n> below <n>");
  });

  it("keeps digits that are part of a word or a version", () => {
    expect(normaliseRiskDetail("v2 api and r1 and 1.5 and sha256")).toBe("v2 api and r1 and 1.5 and sha256");
  });

  it("replaces quoted paths, whatever the quote", () => {
    expect(normaliseRiskDetail(`breaks "src/a/b.ts", 'lib/c.py' and \`x.json\``)).toBe("breaks <path>, <path> and <path>");
  });

  it("keeps quoted words that are not paths", () => {
    expect(normaliseRiskDetail("grep for 'user-settings'")).toBe("grep for 'user-settings'");
  });

  it("keeps unquoted paths", () => {
    expect(normaliseRiskDetail("off-scope: docs/billing.md")).toBe("off-scope: docs/billing.md");
  });
});

describe("riskFingerprint", () => {
  const fp = riskFingerprint;

  it("is 24 hex characters", () => {
    expect(fp("anything")).toMatch(/^[0-9a-f]{24}$/);
  });

  it("is the same across case and whitespace changes", () => {
    expect(fp("Signature window is too wide")).toBe(fp("  signature   WINDOW is\ntoo wide "));
  });

  it("is the same across changed counts", () => {
    expect(fp("3 tests still failing in billing")).toBe(fp("12 tests still failing in billing"));
    expect(fp("router.ts has grown past 300 lines")).toBe(fp("router.ts has grown past 450 lines"));
  });

  it("is the same across changed quoted paths", () => {
    expect(fp('flaky test in "test/a.spec.ts"')).toBe(fp("flaky test in 'test/b/c.spec.ts'"));
  });

  it("combines all normalisations", () => {
    expect(fp('  2 Flaky tests in "test/a.spec.ts"')).toBe(fp("17 flaky   TESTS in `e2e/login.spec.ts`"));
  });

  it("differs for different risks", () => {
    const fingerprints = [
      fp("dead-letter path never exercised"),
      fp("signature tolerance window is 5 minutes"),
      fp("router.ts has grown past 300 lines"),
      fp("router.js has grown past 300 lines"),
      fp("v1 endpoint removed"),
      fp("v2 endpoint removed"),
      fp("flaky test in 'user-settings'"),
      fp("flaky test in 'admin-settings'"),
    ];
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
