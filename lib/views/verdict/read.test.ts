import { execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { fakeSecrets } from "@/testing/fake-secrets";
import type { VerdictPointerReadingDto } from "./dto";
import { NO_ROOT_REASON, readVerdict, summariseVerdict, verdictReadingDto, type VerdictPointer } from "./read";
import { MISSING, REFUSAL } from "./safe-path";
import { makeTempWorkspace, tempWorkspaceForEachTest } from "@/testing/temp-workspace";

const EXAMPLE_ROOT = fileURLToPath(new URL("../../../testing/fixtures/examples/workspace/", import.meta.url));

const verification = (ref: string): VerdictPointer => ({ kind: "verification", ref });
const review = (ref: string): VerdictPointer => ({ kind: "review", ref });
const other = (ref: string): VerdictPointer => ({ kind: "other", ref });

const PASSING_VERIFICATION = JSON.stringify({ task_id: "T-1", passed: true, findings: [] });
const PASSING_REVIEW = JSON.stringify({
  task_id: "T-1",
  total: 9,
  verdict: "pass",
  dimensions: [{ name: "problem_fit", score: 2, note: "" }],
});

async function readOne(pointer: VerdictPointer, roots: string[], maxBytes?: number): Promise<VerdictPointerReadingDto> {
  const reading = await readVerdict([pointer], roots, { maxBytes });
  expect(reading.pointers).toHaveLength(1);
  return reading.pointers[0]!;
}

describe("readVerdict on the shared example workspace", () => {
  it("renders T-014 as a failed verification and a soft_fail review", async () => {
    const reading = await readVerdict(
      [verification("outputs/verification/T-014.json"), review("outputs/review/T-014.json")],
      [EXAMPLE_ROOT],
    );
    expect(reading.summary.state).toBe("fail");
    expect(reading.summary.reasons).toEqual([
      "verification outputs/verification/T-014.json did not pass (findings: 1 critical, 1 medium, 1 info)",
      "review outputs/review/T-014.json: verdict soft_fail, total 6/10 is below 7",
    ]);

    const [check, rated] = reading.pointers;
    expect(check).toMatchObject({ kind: "verification", status: "ok" });
    if (check?.report?.type !== "verification") throw new Error("expected a verification report");
    expect(check.report.passed).toBe(false);
    expect(check.report.coverage).toEqual({ current: 0.71, previous: 0.74 });
    expect(check.report.head_commit).toBe("9b2e7d1");
    expect(check.report.finding_count).toBe(3);
    expect(check.report.findings.map((group) => [group.severity, group.count])).toEqual([
      ["critical", 1],
      ["high", 0],
      ["medium", 1],
      ["low", 0],
      ["info", 1],
    ]);
    expect(check.report.findings.flatMap((group) => group.items.map((item) => [item.severity_raw, item.severity, item.code]))).toEqual([
      ["block", "critical", "acceptance.failed"],
      ["warn", "medium", "scope.off_scope"],
      ["info", "info", "coverage.minor_regression"],
    ]);
    expect(check.report.findings[0]!.items[0]!.detail).toBe("test_invoice_rounding_half_even still red");

    expect(rated).toMatchObject({ kind: "review", status: "ok" });
    if (rated?.report?.type !== "review") throw new Error("expected a review report");
    expect(rated.report).toMatchObject({ total: 6, verdict: "soft_fail", passed: false, missing_dimensions: [] });
    expect(rated.report.dimensions).toEqual([
      { name: "problem_fit", score: 2, note: "touches the invoice totals the task names" },
      { name: "scope_discipline", score: 1, note: "edited docs outside scope" },
      { name: "assumptions", score: 1, note: "assumes all currencies use 2 decimals" },
      { name: "verification_quality", score: 0, note: "the acceptance test is still failing" },
      { name: "handoff_readiness", score: 2, note: "next action is concrete" },
    ]);
  });

  it("renders T-022 as passing", async () => {
    const reading = await readVerdict(
      [verification("outputs/verification/T-022.json"), review("outputs/review/T-022.json")],
      [EXAMPLE_ROOT],
    );
    expect(reading.summary).toEqual({
      state: "pass",
      reasons: ["verification outputs/verification/T-022.json passed", "review outputs/review/T-022.json: pass, 9/10"],
    });
    expect(reading.pointers[0]?.report).toMatchObject({ type: "verification", passed: true, finding_count: 0, coverage: null });
    expect(reading.pointers[1]?.report).toMatchObject({ type: "review", total: 9, verdict: "pass", passed: true });
  });

  it("returns what the DTO schema accepts", async () => {
    const reading = await readVerdict([verification("outputs/verification/T-014.json")], [EXAMPLE_ROOT]);
    expect(verdictReadingDto.parse(reading)).toEqual(reading);
    expect(Date.parse(reading.read_at)).not.toBeNaN();
  });
});

describe("readVerdict on a temp workspace", () => {
  const ws = tempWorkspaceForEachTest();
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("says missing for a file that is not there, and the badge is missing", async () => {
    const reading = await readVerdict([verification("outputs/verification/T-9.json")], [ws.root]);
    expect(reading.pointers[0]).toEqual({
      kind: "verification",
      ref: "outputs/verification/T-9.json",
      status: "missing",
      reason: MISSING.file,
    });
    expect(reading.summary).toEqual({
      state: "missing",
      reasons: [`verification outputs/verification/T-9.json: missing - ${MISSING.file}`],
    });
  });

  it("refuses traversal without opening anything, and the canary outside stays unread", async () => {
    await ws.write("canary.json", JSON.stringify({ passed: false, findings: [{ severity: "block", detail: "CANARY-SECRET" }] }));
    const open = vi.spyOn(fs, "open");
    const readFile = vi.spyOn(fs, "readFile");
    const realpath = vi.spyOn(fs, "realpath");
    const reading = await readVerdict([other("../canary.json"), verification("../../etc/passwd")], [ws.root]);
    for (const pointer of reading.pointers) {
      expect(pointer).toMatchObject({ status: "refused", reason: REFUSAL.dotDot });
      expect(pointer.report).toBeUndefined();
    }
    expect(reading.pointers[0]!.reason).toMatch(/\.\./);
    expect(open).not.toHaveBeenCalled();
    expect(readFile).not.toHaveBeenCalled();
    expect(realpath).not.toHaveBeenCalled();
    expect(JSON.stringify(reading)).not.toContain("CANARY-SECRET");
    expect(reading.summary.state).toBe("missing");
  });

  it.each([
    ["an absolute path", "<canary>", REFUSAL.absolute],
    ["a Windows drive path", "C:\\canary.json", REFUSAL.absolute],
    ["a UNC path", "\\\\server\\share\\canary.json", REFUSAL.absolute],
    ["a protocol-relative URL", "//evil.example/canary.json", REFUSAL.absolute],
    ["percent-encoded dots", "%2e%2e/canary.json", REFUSAL.percent],
    ["a percent-encoded slash", "..%2fcanary.json", REFUSAL.percent],
    ["a backslash", "outputs\\..\\..\\canary.json", REFUSAL.backslash],
    ["a NUL byte", "canary.json\0.txt", REFUSAL.nul],
    ["a control character", "outputs/\tcanary.json", REFUSAL.control],
    ["an empty ref", "", REFUSAL.empty],
  ])("refuses %s without opening anything", async (_label, ref, reason) => {
    const canary = await ws.write("canary.json", JSON.stringify({ passed: true }));
    const open = vi.spyOn(fs, "open");
    const pointer = await readOne(verification(ref === "<canary>" ? canary : ref), [ws.root]);
    expect(pointer).toMatchObject({ status: "refused", reason });
    expect(open).not.toHaveBeenCalled();
  });

  it("redacts secrets in a report's findings before anything shows them", async () => {
    const secrets = fakeSecrets(5);
    const findings = secrets.map((secret) => ({ severity: "high", code: "leak", detail: secret.text }));
    await ws.write("ws/outputs/verification/T-9.json", JSON.stringify({ task_id: "T-9", passed: false, findings }));
    const pointer = await readOne(verification("outputs/verification/T-9.json"), [ws.root]);
    expect(pointer.status).toBe("ok");
    const shown = JSON.stringify(pointer);
    expect(secrets.filter((secret) => shown.includes(secret.secret)).map((secret) => secret.kind)).toEqual([]);
  });

  it("refuses a report file with a second hard link (it can name a file outside the workspace)", async () => {
    const outside = await ws.write("outside-report.json", PASSING_VERIFICATION);
    await ws.write("ws/outputs/verification/.keep", "");
    await fs.link(outside, path.join(ws.root, "outputs/verification/T-8.json"));
    const pointer = await readOne(verification("outputs/verification/T-8.json"), [ws.root]);
    expect(pointer).toMatchObject({ status: "refused", reason: REFUSAL.hardLink });
  });

  it("refuses a symlink inside the root pointing to a file outside, without opening it", async () => {
    const canary = await ws.write("canary.json", JSON.stringify({ passed: true, findings: [] }));
    await ws.symlink(canary, "ws/outputs/verification/T-1.json");
    const open = vi.spyOn(fs, "open");
    const pointer = await readOne(verification("outputs/verification/T-1.json"), [ws.root]);
    expect(pointer).toEqual({
      kind: "verification",
      ref: "outputs/verification/T-1.json",
      status: "refused",
      reason: REFUSAL.symlinkOutside,
    });
    expect(open).not.toHaveBeenCalled();
  });

  it("refuses a file under a symlinked folder that points outside", async () => {
    await ws.write("outside/verification/T-1.json", PASSING_VERIFICATION);
    await ws.symlink(path.join(ws.base, "outside"), "ws/outputs");
    const open = vi.spyOn(fs, "open");
    const pointer = await readOne(verification("outputs/verification/T-1.json"), [ws.root]);
    expect(pointer).toMatchObject({ status: "refused", reason: REFUSAL.symlinkOutside });
    expect(open).not.toHaveBeenCalled();
  });

  it("reads through a symlink that stays inside the root", async () => {
    await ws.write("ws/archive/T-1.json", PASSING_VERIFICATION);
    await ws.symlink(path.join(ws.root, "archive", "T-1.json"), "ws/outputs/verification/T-1.json");
    const pointer = await readOne(verification("outputs/verification/T-1.json"), [ws.root]);
    expect(pointer).toMatchObject({ status: "ok", report: { type: "verification", passed: true } });
  });

  it.each([
    ["https://ci.example.com/runs/42?tab=verdict", "https://ci.example.com/runs/42?tab=verdict"],
    ["http://ci.example.com/runs/42", "http://ci.example.com/runs/42"],
    ["HTTPS://CI.example.com/r", "https://ci.example.com/r"],
  ])("makes %j a link", async (ref, url) => {
    const open = vi.spyOn(fs, "open");
    expect(await readOne(other(ref), [ws.root])).toEqual({ kind: "other", ref, status: "link", url });
    expect(open).not.toHaveBeenCalled();
  });

  it.each([
    ["javascript:alert(document.cookie)", "unsupported link scheme javascript:"],
    ["JavaScript:alert(1)", "unsupported link scheme javascript:"],
    ["file:///etc/passwd", "unsupported link scheme file:"],
    ["data:text/html,<script>alert(1)</script>", "unsupported link scheme data:"],
    ["https://", "malformed URL"],
  ])("refuses %j as a link", async (ref, reason) => {
    const open = vi.spyOn(fs, "open");
    const pointer = await readOne(other(ref), [ws.root]);
    expect(pointer).toEqual({ kind: "other", ref, status: "refused", reason });
    expect(pointer.url).toBeUndefined();
    expect(open).not.toHaveBeenCalled();
  });

  it("classifies a pointer of kind other by its content", async () => {
    await ws.write("ws/a.json", PASSING_VERIFICATION);
    await ws.write("ws/b.json", PASSING_REVIEW);
    await ws.write("ws/c.json", JSON.stringify({ task_id: "T-1", summary: "a handoff, not a report" }));
    const reading = await readVerdict([other("a.json"), other("b.json"), other("c.json")], [ws.root]);
    expect(reading.pointers.map((pointer) => [pointer.kind, pointer.status, pointer.report?.type])).toEqual([
      ["other", "ok", "verification"],
      ["other", "ok", "review"],
      ["other", "invalid", undefined],
    ]);
    expect(reading.pointers[2]!.reason).toMatch(/neither a verification report .* nor a review/);
    expect(reading.pointers[1]!.report).toMatchObject({
      missing_dimensions: ["scope_discipline", "assumptions", "verification_quality", "handoff_readiness"],
    });
  });

  it("says invalid when a declared kind does not match the content", async () => {
    await ws.write("ws/outputs/verification/T-1.json", PASSING_REVIEW);
    const pointer = await readOne(verification("outputs/verification/T-1.json"), [ws.root]);
    expect(pointer.status).toBe("invalid");
    expect(pointer.reason).toMatch(/^not a valid verification report: passed/);
  });

  it.each([
    ["a total above 10", { total: 11, verdict: "pass" }],
    ["an unknown verdict", { total: 8, verdict: "great" }],
    ["a dimension scored 3", { total: 8, verdict: "pass", dimensions: [{ name: "problem_fit", score: 3 }] }],
  ])("says invalid for a review with %s", async (_label, content) => {
    await ws.write("ws/r.json", JSON.stringify(content));
    expect(await readOne(review("r.json"), [ws.root])).toMatchObject({ status: "invalid" });
  });

  it("fails a review file whose verdict is pass but whose total is below 7", async () => {
    await ws.write("ws/r.json", JSON.stringify({ total: 6, verdict: "PASS", dimensions: [] }));
    const reading = await readVerdict([review("r.json")], [ws.root]);
    expect(reading.pointers[0]!.report).toMatchObject({ type: "review", verdict: "pass", total: 6, passed: false });
    expect(reading.summary).toEqual({ state: "fail", reasons: ["review r.json: total 6/10 is below 7"] });
  });

  it("refuses a file that, once opened, turns out to be outside the root (swapped after the check)", async () => {
    await ws.write("ws/v.json", PASSING_VERIFICATION);
    // Stands in for a folder swapped for a symlink between the realpath check and the open.
    const readlink = vi.spyOn(fs, "readlink").mockResolvedValueOnce("/etc/passwd");
    expect(await readOne(verification("v.json"), [ws.root])).toMatchObject({ status: "refused", reason: REFUSAL.symlinkOutside });
    expect(readlink).toHaveBeenCalledWith(expect.stringMatching(/^\/proc\/self\/fd\/\d+$/));
  });

  it("says invalid for malformed JSON, with the parse message but not the file's content", async () => {
    await ws.write("ws/.env", "API_KEY=sk-live-0123456789abcdef");
    await ws.write("ws/broken.json", '{"passed": true,');
    const secret = await readOne(verification(".env"), [ws.root]);
    const broken = await readOne(verification("broken.json"), [ws.root]);
    expect(secret.status).toBe("invalid");
    expect(secret.reason).toMatch(/^not valid JSON: unexpected character/);
    expect(secret.reason).not.toContain("API");
    expect(secret.reason).not.toContain("sk-live");
    expect(secret.reason).not.toContain("API_KEY=");
    expect(broken).toMatchObject({ status: "invalid" });
    expect(broken.reason).toMatch(/^not valid JSON: /);
  });

  it("says invalid, without parsing, for a file over 1 MiB", async () => {
    const padding = "x".repeat(1024 * 1024);
    await ws.write("ws/big.json", JSON.stringify({ passed: true, findings: [], padding }));
    const parse = vi.spyOn(JSON, "parse");
    expect(await readOne(verification("big.json"), [ws.root])).toMatchObject({ status: "invalid", reason: "larger than 1 MiB" });
    expect(parse).not.toHaveBeenCalled();
  });

  it("reads a file of exactly the limit and refuses one byte more", async () => {
    const content = PASSING_VERIFICATION;
    const limit = Buffer.byteLength(content);
    await ws.write("ws/exact.json", content);
    await ws.write("ws/over.json", `${content} `);
    expect(await readOne(verification("exact.json"), [ws.root], limit)).toMatchObject({ status: "ok" });
    expect(await readOne(verification("over.json"), [ws.root], limit)).toMatchObject({
      status: "invalid",
      reason: `larger than ${limit} bytes`,
    });
  });

  it("says invalid for a folder and for a FIFO, without hanging", async () => {
    await fs.mkdir(path.join(ws.root, "outputs", "folder.json"), { recursive: true });
    expect(await readOne(verification("outputs/folder.json"), [ws.root])).toMatchObject({ status: "invalid", reason: "not a regular file" });
    execFileSync("mkfifo", [path.join(ws.root, "fifo.json")]);
    expect(await readOne(verification("fifo.json"), [ws.root])).toMatchObject({ status: "invalid", reason: "not a regular file" });
  });

  it("reads a BOM-prefixed file, and says invalid for bytes that are not UTF-8", async () => {
    await ws.write("ws/bom.json", `\uFEFF${PASSING_VERIFICATION}`);
    await ws.write("ws/latin1.json", Buffer.from([0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d]));
    expect(await readOne(verification("bom.json"), [ws.root])).toMatchObject({ status: "ok" });
    expect(await readOne(verification("latin1.json"), [ws.root])).toMatchObject({ status: "invalid", reason: "not UTF-8 text" });
  });

  it("maps finding severities through the severity table, keeping unknown words", async () => {
    await ws.write(
      "ws/v.json",
      JSON.stringify({
        passed: true,
        coverage: 0.8,
        findings: [{ code: "x", severity: "P1", detail: "a" }, { severity: "urgent", message: "b" }, "c"],
      }),
    );
    const pointer = await readOne(verification("v.json"), [ws.root]);
    if (pointer.report?.type !== "verification") throw new Error("expected a verification report");
    expect(pointer.report.coverage).toBe(0.8);
    const items = pointer.report.findings.flatMap((group) => group.items);
    expect(items).toEqual([
      { code: "x", detail: "a", severity: "high", severity_raw: "P1", severity_known: true },
      { code: null, detail: "b", severity: "medium", severity_raw: "urgent", severity_known: false },
      { code: null, detail: "c", severity: "medium", severity_raw: null, severity_known: false },
    ]);
  });

  it("says no_root when the thread has no workspace root, but still refuses traversal first", async () => {
    expect(await readOne(verification("outputs/v.json"), [])).toMatchObject({ status: "no_root", reason: NO_ROOT_REASON });
    expect(await readOne(verification("../v.json"), [])).toMatchObject({ status: "refused" });
    expect(await readOne(other("https://ci.example.com/r"), [])).toMatchObject({ status: "link" });
  });

  it("tries each root in order", async () => {
    const second = await makeTempWorkspace();
    try {
      await second.write("ws/outputs/v.json", PASSING_VERIFICATION);
      const pointer = await readOne(verification("outputs/v.json"), [path.join(ws.base, "gone"), ws.root, second.root]);
      expect(pointer).toMatchObject({ status: "ok", report: { passed: true } });
      expect(await readOne(verification("outputs/none.json"), [ws.root, second.root])).toMatchObject({
        status: "missing",
        reason: MISSING.file,
      });
      expect(await readOne(verification("outputs/none.json"), [path.join(ws.base, "gone")])).toMatchObject({
        status: "missing",
        reason: MISSING.root,
      });
    } finally {
      await second.remove();
    }
  });

  it("combines an inline verdict with the reports", async () => {
    await ws.write("ws/v.json", PASSING_VERIFICATION);
    const failing = await readVerdict([verification("v.json")], [ws.root], { inlineVerdict: { review_total: 5 } });
    expect(failing.summary).toEqual({
      state: "fail",
      reasons: ["inline verdict: review total 5/10 is below 7"],
    });
    const inlineOnly = await readVerdict([verification("gone.json")], [ws.root], { inlineVerdict: { passed: true } });
    expect(inlineOnly.summary.state).toBe("pass");
    expect(inlineOnly.summary.reasons).toEqual(["inline verdict: passed", `verification gone.json: missing - ${MISSING.file}`]);
  });
});

describe("summariseVerdict", () => {
  const ok = (report: VerdictPointerReadingDto["report"]): VerdictPointerReadingDto => ({
    kind: report?.type ?? "other",
    ref: "r.json",
    status: "ok",
    report,
  });
  const reviewReport = (total: number, verdict: "pass" | "soft_fail" | "hard_fail") => ({
    type: "review" as const,
    task_id: null,
    total,
    verdict,
    passed: verdict === "pass" && total >= 7,
    dimensions: [],
    missing_dimensions: [],
  });

  it("is missing with no pointer and no inline verdict", () => {
    expect(summariseVerdict([])).toEqual({ state: "missing", reasons: ["no verdict pointer"] });
  });

  it("is missing when the only pointer is a link", () => {
    const link: VerdictPointerReadingDto = { kind: "other", ref: "https://x.example", status: "link", url: "https://x.example/" };
    expect(summariseVerdict([link]).state).toBe("missing");
  });

  it("fails a review whose verdict is pass but whose total is below 7", () => {
    expect(summariseVerdict([ok(reviewReport(6, "pass"))])).toEqual({
      state: "fail",
      reasons: ["review r.json: total 6/10 is below 7"],
    });
  });

  it("fails a hard_fail review even with a high total, and passes 7/10", () => {
    expect(summariseVerdict([ok(reviewReport(9, "hard_fail"))]).state).toBe("fail");
    expect(summariseVerdict([ok(reviewReport(7, "pass"))]).state).toBe("pass");
  });

  it("passes on an inline verdict alone, and fails on a failing one", () => {
    expect(summariseVerdict([], { passed: true, review_total: 8 }).state).toBe("pass");
    expect(summariseVerdict([], { review_verdict: "soft_fail" })).toEqual({
      state: "fail",
      reasons: ["inline verdict: review verdict is soft_fail"],
    });
  });

  it("passes when what was read passes, listing what could not be read", () => {
    const missing: VerdictPointerReadingDto = { kind: "verification", ref: "v.json", status: "missing", reason: MISSING.file };
    expect(summariseVerdict([ok(reviewReport(9, "pass")), missing])).toEqual({
      state: "pass",
      reasons: ["review r.json: pass, 9/10", `verification v.json: missing - ${MISSING.file}`],
    });
  });
});

describe("reports sent with the packet (docs/decisions/051-verdict-reports-travel.md)", () => {
  const FAILING = JSON.stringify({ passed: false, findings: ["red"] });

  it("stand in when no root is known, and say they were sent", async () => {
    const reading = await readVerdict([verification("outputs/verification/T-1.json")], [], {
      attached: new Map([["outputs/verification/T-1.json", FAILING]]),
    });
    expect(reading.pointers.map((pointer) => [pointer.status, pointer.from])).toEqual([["ok", "attached"]]);
    expect(reading.summary.state).toBe("fail");
  });

  it("give way to the workspace's file, and stand in when the workspace has none", async () => {
    const attached = new Map([
      ["outputs/verification/T-014.json", JSON.stringify({ passed: true })],
      ["outputs/verification/absent.json", FAILING],
    ]);
    const reading = await readVerdict(
      [verification("outputs/verification/T-014.json"), verification("outputs/verification/absent.json")],
      [EXAMPLE_ROOT],
      { attached },
    );
    expect(reading.pointers.map((pointer) => [pointer.status, pointer.from, pointer.report?.passed])).toEqual([
      ["ok", "workspace", false],
      ["ok", "attached", false],
    ]);
  });

  it("without either, the verdict was not sent: no setup advice", async () => {
    const reading = await readVerdict([verification("outputs/verification/T-1.json")], []);
    expect(reading.summary).toEqual({ state: "missing", reasons: ["verification outputs/verification/T-1.json: verdict not sent"] });
  });
});
