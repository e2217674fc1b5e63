import { describe, expect, it } from "vitest";
import { failureFingerprint, normaliseFailureText } from "./fingerprint";
import { itTransforms } from "@/testing/text-cases";

const n = normaliseFailureText;

describe("normaliseFailureText", () => {
  itTransforms(n, [
    ["lowercases, collapses whitespace and drops a shell prompt and a final full stop", [["  $ NPM   run\ttest:dlq ", "npm run test:dlq"], ["> pytest -x", "pytest -x"], ["Timed out waiting for the queue.", "timed out waiting for the queue"]]],
    ["replaces digits-only tokens but keeps digits inside words and versions", [["pytest api/billing -k rounding -> exit 1", "pytest api/billing -k rounding -> exit <n>"], ["3 tests failed (exit 2)", "<n> tests failed (exit <n>)"], ["node v20 and python3.12 and T-014", "node v20 and python3.12 and t-014"]]],
    ["replaces quoted paths, whatever the quote", [[`cannot open "src/a/b.ts" or 'lib/c.py'`, "cannot open <path> or <path>"]]],
    ["replaces ISO timestamps and dates", [["lock held since 2026-11-29T06:00:00.123Z", "lock held since <time>"], ["lock held since 2026-11-30 17:45:01+01:00", "lock held since <time>"], ["lock held since 2026-11-30T17:45", "lock held since <time>"], ["see log-2026-11-29.txt", "see log-<time>.txt"]]],
    ["replaces clock times with seconds but keeps line and column references", [["failed at 07:03:01.250", "failed at <time>"], ["syntax error at src/a.ts:12:4", "syntax error at src/a.ts:12:4"]]],
    ["replaces unix times in seconds and milliseconds", [["build-1764396000 failed", "build-<time> failed"], ["run 1764396000123 failed", "run <time> failed"]]],
    ["replaces temporary folders, quoted or not, on every platform", [["cannot write /tmp/baton-test-aB3xYz/out.json", "cannot write <tmp>"], [`cannot write "/tmp/pytest-of-me/pytest-12/x.db"`, "cannot write <tmp>"], ["cannot write /var/tmp/x1", "cannot write <tmp>"], ["cannot write /private/var/folders/7x/k2_l0000gn/T/tmp.Q1w2", "cannot write <tmp>"], ["cannot write $TMPDIR/abc", "cannot write <tmp>"], [String.raw`cannot write C:\Users\me\AppData\Local\Temp\abc\x.log`, "cannot write <tmp>"], [String.raw`cannot write %TEMP%\abc`, "cannot write <tmp>"], ["--out=/tmp", "--out=<tmp>"]]],
    ["keeps folders that only contain tmp in their name or path", [["rm -rf build/tmp/cache", "rm -rf build/tmp/cache"], ["cat /tmpl/x", "cat /tmpl/x"], [String.raw`open C:\templates\a.txt`, String.raw`open c:\templates\a.txt`]]],
    ["replaces uuids, hex ids and hashes", [["job 3f2c1a9e-8b7d-4c6e-9f01-23456789abcd failed", "job <id> failed"], ["at commit 9b2e7d1, base d4c3b2a1e0f9", "at commit <hex>, base <hex>"], ["segfault at 0x7ffee4b2", "segfault at <hex>"], ["image sha256:" + "ab12".repeat(16), "image sha256:<hex>"]]],
    ["keeps words that happen to be hex letters only, and short hex", [["decade facade added e2e abc123", "decade facade added e2e abc123"]]],
    ["replaces durations", [["timed out after 10 minutes", "timed out after <duration>"], ["took 12.5s then 340 ms", "took <duration> then <duration>"]]],
  ]);
});

describe("failureFingerprint", () => {
  const fp = failureFingerprint;

  it("is 24 hex characters", () => {
    expect(fp("npm test")).toMatch(/^[0-9a-f]{24}$/);
  });

  it("is the same for the same failure on another run", () => {
    expect(fp("$ npm run test:dlq", "Timed out after 10 minutes waiting for the local queue")).toBe(
      fp("npm run  test:dlq", "timed out after 12 minutes waiting for the local queue."),
    );
    expect(fp("pytest -k rounding -> exit 1", "see /tmp/pytest-of-a/1/log at 2026-11-29T06:00:00Z")).toBe(
      fp("PYTEST -k rounding -> exit 2", "see /tmp/pytest-of-b/7/log at 2026-11-30T07:13:00Z"),
    );
    expect(fp("git push", "rejected: remote has 9b2e7d1")).toBe(fp("git push", "rejected: remote has 0c1d2e3f4a5b"));
  });

  it("treats a missing reason like an empty one", () => {
    expect(fp("npm test")).toBe(fp("npm test", null));
    expect(fp("npm test")).toBe(fp("npm test", "  "));
  });

  it("differs for another command or another reason", () => {
    const fingerprints = [
      fp("npm test"),
      fp("npm test", "timed out"),
      fp("npm test", "out of memory"),
      fp("npm run build"),
      fp("pytest -k rounding"),
      fp("pytest -k totals"),
      fp("npm test timed out"),
    ];
    expect(new Set(fingerprints).size).toBe(fingerprints.length);
  });

  it("does not mix the attempt into the reason", () => {
    expect(fp("npm test timed", "out")).not.toBe(fp("npm test", "timed out"));
  });
});

describe("hostile input", () => {
  it("stays fast on text built to make the patterns backtrack, and cuts long text", () => {
    const started = performance.now();
    const hostile = ["C:\\".repeat(200_000), "a".repeat(1_000_000), `C:\\${"x\\".repeat(100_000)}`];
    for (const text of hostile) failureFingerprint(text, text);
    // Generous: the unbounded pattern took minutes on 1 MiB; bounded it takes milliseconds.
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(normaliseFailureText(`${"a ".repeat(5_000)}tail`)).not.toContain("tail");
  });
});
