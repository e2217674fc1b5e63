import { describe, expect, it } from "vitest";
import { failureFingerprint, normaliseFailureText } from "./fingerprint";

const n = normaliseFailureText;

describe("normaliseFailureText", () => {
  it("lowercases, collapses whitespace and drops a shell prompt and a final full stop", () => {
    expect(n("  $ NPM   run\ttest:dlq ")).toBe("npm run test:dlq");
    expect(n("> pytest -x")).toBe("pytest -x");
    expect(n("Timed out waiting for the queue.")).toBe("timed out waiting for the queue");
  });

  it("replaces digits-only tokens but keeps digits inside words and versions", () => {
    expect(n("pytest api/billing -k rounding -> exit 1")).toBe("pytest api/billing -k rounding -> exit <n>");
    expect(n("3 tests failed (exit 2)")).toBe("<n> tests failed (exit <n>)");
    expect(n("node v20 and python3.12 and T-014")).toBe("node v20 and python3.12 and t-014");
  });

  it("replaces quoted paths, whatever the quote", () => {
    expect(n(`cannot open "src/a/b.ts" or 'lib/c.py'`)).toBe("cannot open <path> or <path>");
  });

  it("replaces ISO timestamps and dates", () => {
    expect(n("lock held since 2026-11-29T06:00:00.123Z")).toBe("lock held since <time>");
    expect(n("lock held since 2026-11-30 17:45:01+01:00")).toBe("lock held since <time>");
    expect(n("lock held since 2026-11-30T17:45")).toBe("lock held since <time>");
    expect(n("see log-2026-11-29.txt")).toBe("see log-<time>.txt");
  });

  it("replaces clock times with seconds but keeps line and column references", () => {
    expect(n("failed at 07:03:01.250")).toBe("failed at <time>");
    expect(n("syntax error at src/a.ts:12:4")).toBe("syntax error at src/a.ts:12:4");
  });

  it("replaces unix times in seconds and milliseconds", () => {
    expect(n("build-1764396000 failed")).toBe("build-<time> failed");
    expect(n("run 1764396000123 failed")).toBe("run <time> failed");
  });

  it("replaces temporary folders, quoted or not, on every platform", () => {
    expect(n("cannot write /tmp/baton-test-aB3xYz/out.json")).toBe("cannot write <tmp>");
    expect(n(`cannot write "/tmp/pytest-of-me/pytest-12/x.db"`)).toBe("cannot write <tmp>");
    expect(n("cannot write /var/tmp/x1")).toBe("cannot write <tmp>");
    expect(n("cannot write /private/var/folders/7x/k2_l0000gn/T/tmp.Q1w2")).toBe("cannot write <tmp>");
    expect(n("cannot write $TMPDIR/abc")).toBe("cannot write <tmp>");
    expect(n(String.raw`cannot write C:\Users\me\AppData\Local\Temp\abc\x.log`)).toBe("cannot write <tmp>");
    expect(n(String.raw`cannot write %TEMP%\abc`)).toBe("cannot write <tmp>");
    expect(n("--out=/tmp")).toBe("--out=<tmp>");
  });

  it("keeps folders that only contain tmp in their name or path", () => {
    expect(n("rm -rf build/tmp/cache")).toBe("rm -rf build/tmp/cache");
    expect(n("cat /tmpl/x")).toBe("cat /tmpl/x");
    expect(n(String.raw`open C:\templates\a.txt`)).toBe(String.raw`open c:\templates\a.txt`);
  });

  it("replaces uuids, hex ids and hashes", () => {
    expect(n("job 3f2c1a9e-8b7d-4c6e-9f01-23456789abcd failed")).toBe("job <id> failed");
    expect(n("at commit 9b2e7d1, base d4c3b2a1e0f9")).toBe("at commit <hex>, base <hex>");
    expect(n("segfault at 0x7ffee4b2")).toBe("segfault at <hex>");
    expect(n("image sha256:" + "ab12".repeat(16))).toBe("image sha256:<hex>");
  });

  it("keeps words that happen to be hex letters only, and short hex", () => {
    expect(n("decade facade added e2e abc123")).toBe("decade facade added e2e abc123");
  });

  it("replaces durations", () => {
    expect(n("timed out after 10 minutes")).toBe("timed out after <duration>");
    expect(n("took 12.5s then 340 ms")).toBe("took <duration> then <duration>");
  });
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
