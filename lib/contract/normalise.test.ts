import { describe, expect, it } from "vitest";
import { examplePacketNames, examplePacketText } from "@/testing/packets";
import { riskFingerprint } from "./fingerprint";
import { normalisePacket, NEXT_ACTION_SENTINEL } from "./normalise";
import { preparePacket, type PreparedPacket } from "./prepare";
import { parseJsonText, validatePacket } from "./validate";

const RECEIVED_AT = Date.UTC(2026, 10, 29, 8, 0, 0); // 2026-11-29T08:00:00Z

function example(name: string): PreparedPacket {
  return preparePacket(parseJsonText(examplePacketText(name)), RECEIVED_AT);
}
const codes = (prepared: PreparedPacket) => prepared.flags.map((flag) => flag.code);

describe("example packets", () => {
  const files = examplePacketNames();

  it("are the seven known fixtures", () => {
    // A new fixture should get its own expectations below.
    expect(files.sort()).toEqual([
      "dirty-state.json",
      "full-v1.json",
      "lesson-shape.json",
      "sentinel-next-action.json",
      "status-report.json",
      "strings-only.json",
      "workbench-shape.json",
    ]);
  });

  it.each(files)("%s is accepted with a 64-hex content hash", (file) => {
    const prepared = example(file);
    expect(prepared.canonical.schema_version).toBe(1);
    expect(prepared.contentHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("all have distinct content hashes", () => {
    const hashes = files.map((file) => example(file).contentHash);
    expect(new Set(hashes).size).toBe(files.length);
  });

  it.each([
    ["lesson-shape.json", "has no flags and a task thread key", [], "task:T-014"],
    ["workbench-shape.json", "has no flags and keys its thread by task before session", [], "task:T-022"],
    [
      "full-v1.json",
      "is flagged only for its open questions, and threads by project@branch#topic",
      [{ code: "open_questions", reason: "2 questions for a person, 1 blocking." }],
      "acme/payments@feat/refund-webhooks#refund webhooks",
    ],
  ])("%s %s", (file, _what, flags, threadKey) => {
    const prepared = example(file);
    expect(prepared.flags).toEqual(flags);
    expect(prepared.threadKey).toBe(threadKey);
  });
});

describe("lesson-shape.json", () => {
  const prepared = example("lesson-shape.json");
  const { canonical } = prepared;

  it("turns the text form of an argv list into a command line", () => {
    expect(canonical.commands_run).toEqual([
      { command: "pytest api/billing" },
      { command: "ruff check api/billing" },
      { command: "pytest api/billing -k rounding" },
      { command: "pytest api/billing -k rounding" },
    ]);
  });

  it("maps block -> critical and warn -> medium, keeping the raw words and default ids", () => {
    expect(canonical.open_risks).toEqual([
      {
        id: "r0",
        severity: "critical",
        severity_raw: "block",
        detail: "acceptance.failed: test_invoice_rounding_half_even still red",
        fingerprint: riskFingerprint("acceptance.failed: test_invoice_rounding_half_even still red"),
      },
      {
        id: "r1",
        severity: "medium",
        severity_raw: "warn",
        detail: "off-scope: docs/billing.md",
        fingerprint: riskFingerprint("off-scope: docs/billing.md"),
      },
      {
        id: "r2",
        severity: "medium",
        severity_raw: "warn",
        detail: "review total 6 below 7",
        fingerprint: riskFingerprint("review total 6 below 7"),
      },
    ]);
    expect(prepared.highestSeverity).toBe("critical");
    expect(prepared.riskCounts).toEqual({ critical: 1, high: 0, medium: 2, low: 0, info: 0 });
  });

  it("reads the exit code out of a '-> exit N' failed attempt", () => {
    expect(canonical.failed_attempts).toEqual([{ attempt: "pytest api/billing -k rounding -> exit 1", exit_code: 1 }]);
  });

  it("maps the {verdict, review} pointer to verification and review refs", () => {
    expect(canonical.verdict_pointer).toEqual([
      { kind: "verification", ref: "outputs/verification/T-014.json" },
      { kind: "review", ref: "outputs/review/T-014.json" },
    ]);
  });

  it("normalises feedback_tail commands, argv arrays included", () => {
    expect(canonical.feedback_tail).toEqual([
      { command: "pytest api/billing", exit_code: 0 },
      { command: "ruff check api/billing", exit_code: 0 },
      { command: "pytest api/billing -k rounding", exit_code: 1 },
      { command: "pytest api/billing -k rounding", exit_code: 1 },
    ]);
  });

  it("keeps string changed files as paths and the next action as text", () => {
    expect(canonical.changed_files).toEqual([
      { path: "api/billing/invoice.py" },
      { path: "api/billing/tests/test_invoice.py" },
      { path: "docs/billing.md" },
    ]);
    expect(canonical.next_action).toEqual({
      text: "switch invoice totals to Decimal with ROUND_HALF_EVEN, then rerun pytest api/billing -k rounding",
    });
    expect(canonical.task_id).toBe("T-014");
    expect(canonical.created_at).toBeUndefined();
    expect(canonical.extra).toEqual({});
  });
});

describe("workbench-shape.json", () => {
  const prepared = example("workbench-shape.json");

  it("turns the epoch-seconds float timestamp into an ISO created_at", () => {
    expect(prepared.canonical.created_at).toBe("2026-11-28T08:57:00.441Z");
    expect(prepared.createdAtMs).toBe(1795856220441);
    expect(prepared.canonical.session_id).toBe("sess-2026-11-28-0917");
  });

  it("has empty risk and attempt lists, not missing ones", () => {
    expect(prepared.canonical.open_risks).toEqual([]);
    expect(prepared.canonical.failed_attempts).toEqual([]);
    expect(prepared.highestSeverity).toBeNull();
    expect(prepared.riskCounts).toEqual({ critical: 0, high: 0, medium: 0, low: 0, info: 0 });
  });
});

describe("full-v1.json", () => {
  const prepared = example("full-v1.json");
  const { canonical } = prepared;

  it("maps the array of verdict pointer objects to typed refs", () => {
    expect(canonical.verdict_pointer).toEqual([
      { kind: "verification", ref: "outputs/verification/PAY-311.json" },
      { kind: "review", ref: "https://ci.example.com/reviews/PAY-311" },
    ]);
  });

  it("keeps the unknown field x_cost_usd verbatim in extra", () => {
    expect(canonical.extra).toEqual({ x_cost_usd: 3.41 });
    expect(canonical).not.toHaveProperty("x_cost_usd");
  });

  it("normalises metadata", () => {
    expect(canonical).toMatchObject({
      schema_version: 1,
      session_id: "c7a1f0e2-5b1d-4a53-9e1b-6f0b9d1f2a77",
      task_id: "PAY-311",
      agent: { name: "payments-bot", kind: "claude-code", model: "opus" },
      project: "acme/payments",
      branch: "feat/refund-webhooks",
      topic: "refund webhooks",
      last_known_good_commit: "4e1c9a2",
      status: "active",
      created_at: "2026-11-29T06:41:12.000Z",
    });
  });

  it("joins argv commands and keeps null exit codes", () => {
    expect(canonical.commands_run).toEqual([
      { command: "npm test -- webhooks", exit_code: 0, duration_ms: 8123 },
      { command: "npm run typecheck", exit_code: 0, duration_ms: 20411 },
      { command: "npm run test:dlq", exit_code: null, duration_ms: 600000 },
    ]);
    expect(canonical.failed_attempts).toEqual([
      { attempt: "npm run test:dlq", reason: "timed out after 10 minutes waiting for the local queue", exit_code: null },
    ]);
  });

  it("keeps given risk ids, mitigations and severities", () => {
    expect(canonical.open_risks?.map(({ id, severity, severity_raw, mitigation }) => ({ id, severity, severity_raw, mitigation }))).toEqual([
      { id: "r1", severity: "high", severity_raw: "high", mitigation: "run test:dlq with the queue emulator" },
      { id: "r2", severity: "medium", severity_raw: "medium", mitigation: undefined },
      { id: "r3", severity: "low", severity_raw: "low", mitigation: undefined },
    ]);
    expect(canonical.open_risks?.[1]).not.toHaveProperty("mitigation");
    expect(prepared.highestSeverity).toBe("high");
  });

  it("normalises next action, changed files, assumptions, questions and verdict", () => {
    expect(canonical.next_action).toEqual({
      text: "start the queue emulator and make test:dlq pass",
      command: "docker compose up -d queue && npm run test:dlq",
      owner: "agent",
    });
    expect(canonical.changed_files?.[1]).toEqual({ path: "src/webhooks/router.ts", change: "modified", additions: 12, deletions: 3 });
    expect(canonical.assumptions_to_validate).toEqual([
      { text: "refund ids are unique per merchant, not globally", score: 1 },
      { text: "the provider retries for at most 72 hours" },
    ]);
    expect(canonical.questions_for_human).toEqual([
      {
        id: "q-window",
        question: "Use a 3-minute or a 5-minute signature window?",
        options: ["3 minutes", "5 minutes"],
        blocking: false,
      },
      { id: "q-dlq", question: "May I add the queue emulator to docker-compose.yml?", blocking: true },
    ]);
    expect(canonical.verdict).toEqual({ passed: true, review_total: 8, review_verdict: "pass" });
    expect(canonical.clean_state).toEqual([]);
    expect(canonical.preconditions).toEqual(["outputs/verification/PAY-311.json", "docs/decisions/012-webhook-retries.md"]);
  });
});

describe("strings-only.json", () => {
  const prepared = example("strings-only.json");
  const { canonical } = prepared;

  it("makes the bare-string risk medium with no raw word, and flags unknown_severity", () => {
    expect(canonical.open_risks).toEqual([
      {
        id: "r0",
        severity: "medium",
        severity_raw: null,
        detail: "two imports still use the old path in scripts/",
        fingerprint: riskFingerprint("two imports still use the old path in scripts/"),
      },
    ]);
    expect(codes(prepared)).toEqual(["unknown_severity"]);
    expect(prepared.flags[0]?.reason).toBe("1 risk without a recognised severity (none given), shown as medium.");
  });

  it("normalises every string shape", () => {
    expect(canonical.agent).toEqual({ name: "refactor-agent-3" });
    expect(canonical.changed_files).toEqual([{ path: "src/settings/index.ts" }, { path: "src/app.ts" }]);
    expect(canonical.commands_run).toEqual([{ command: "npm test" }, { command: "npm run build" }]);
    expect(canonical.failed_attempts).toEqual([
      { attempt: "npm run build failed once on a stale cache; cleared .next and it passed" },
    ]);
    expect(canonical.next_action).toEqual({ text: "grep scripts/ for 'user-settings' and fix the remaining imports" });
    expect(canonical.verdict_pointer).toEqual([{ kind: "verification", ref: "outputs/verification/settings-rename.json" }]);
  });

  it("threads by branch alone", () => {
    expect(prepared.threadKey).toBe("@chore/rename-settings");
  });
});

describe("sentinel-next-action.json", () => {
  const prepared = example("sentinel-next-action.json");

  it("drops the 'needs human' sentinel: next_action is absent", () => {
    expect(prepared.canonical.next_action).toBeUndefined();
    expect(prepared.canonical).not.toHaveProperty("next_action");
  });

  it("is flagged missing_next_action with the sentinel reason, and nothing else", () => {
    expect(prepared.flags).toEqual([
      {
        code: "missing_next_action",
        reason: 'next_action is the generator\'s placeholder "needs human": the agent recorded no next step.',
      },
    ]);
    expect(prepared.threadKey).toBe("task:T-040");
  });

  it("recognises the sentinel whatever its case and padding", () => {
    const input = { summary: "s", next_action: `  ${NEXT_ACTION_SENTINEL.toUpperCase()} ` };
    const { canonical, notes } = normalisePacket(validatePacket(input), input);
    expect(canonical.next_action).toBeUndefined();
    expect(notes.nextActionSentinel).toBe(true);
  });
});

describe("status-report.json", () => {
  const prepared = example("status-report.json");

  it("has no next_action and is flagged missing_next_action and missing_fields naming it", () => {
    expect(prepared.canonical.next_action).toBeUndefined();
    expect(codes(prepared)).toEqual(["missing_next_action", "missing_fields"]);
    const missing = prepared.flags.find((flag) => flag.code === "missing_fields");
    // The fixture does carry a verdict_pointer, so only next_action is missing.
    expect(missing?.reason).toBe("Missing 1 core field: next_action.");
    expect(missing?.reason).not.toContain("verdict_pointer");
  });

  it("keeps its verdict pointer and info risk", () => {
    expect(prepared.canonical.verdict_pointer).toEqual([
      { kind: "verification", ref: "outputs/verification/T-031.json" },
      { kind: "review", ref: "outputs/review/T-031.json" },
    ]);
    expect(prepared.highestSeverity).toBe("info");
  });

  it("threads by branch and task", () => {
    expect(prepared.threadKey).toBe("@docs/api-reference#T-031");
  });
});

describe("dirty-state.json", () => {
  const prepared = example("dirty-state.json");

  it("converts the created_at offset to UTC", () => {
    expect(prepared.canonical.created_at).toBe("2026-11-29T04:02:00.000Z");
  });

  it("keeps the blocking clean-state problems and is flagged dirty_state", () => {
    expect(prepared.canonical.clean_state).toEqual([
      { check: "working_tree", detail: "infra/prod/vpc.tf modified and not committed" },
      { check: "temp_artifacts", detail: "plan.tfplan.tmp left in infra/prod" },
    ]);
    expect(prepared.flags).toEqual([
      {
        code: "dirty_state",
        reason:
          "Clean-state check found 2 blocking problems: infra/prod/vpc.tf modified and not committed; plan.tfplan.tmp left in infra/prod.",
      },
    ]);
  });

  it("maps the lone {verdict} pointer to a verification ref, and threads by project@branch#task", () => {
    expect(prepared.canonical.verdict_pointer).toEqual([{ kind: "verification", ref: "outputs/verification/T-052.json" }]);
    expect(prepared.canonical.agent).toEqual({ name: "infra-agent" });
    expect(prepared.threadKey).toBe("acme/platform@fix/terraform-drift#T-052");
  });
});

describe("normalisation of other accepted shapes", () => {
  const prepare = (value: Record<string, unknown>) => preparePacket(value, RECEIVED_AT);

  it("accepts the other spellings of risk detail", () => {
    const { canonical } = prepare({
      open_risks: [
        { severity: "low", description: "from description" },
        { severity: "low", risk: "from risk" },
        { severity: "low", text: "from text", id: 7 },
      ],
    });
    expect(canonical.open_risks?.map((risk) => [risk.id, risk.detail])).toEqual([
      ["r0", "from description"],
      ["r1", "from risk"],
      ["7", "from text"],
    ]);
  });

  it("accepts {command, why|error} failed attempts and argv attempts", () => {
    const { canonical } = prepare({
      failed_attempts: [
        { command: ["git", "push", "--force"], why: "  protected branch  ", exit_code: 1 },
        { attempt: "make", error: "no rule" },
      ],
    });
    expect(canonical.failed_attempts).toEqual([
      { attempt: "git push --force", reason: "protected branch", exit_code: 1 },
      { attempt: "make", reason: "no rule" },
    ]);
  });

  it("accepts a {description} next action with an argv command", () => {
    const { canonical } = prepare({ next_action: { description: " run it ", command: ["npm", "run", "a b"] } });
    expect(canonical.next_action).toEqual({ text: "run it", command: "npm run 'a b'" });
  });

  it("guesses the kind of string verdict pointers and reads {verification} objects", () => {
    const { canonical } = prepare({
      verdict_pointer: [
        "outputs/review/T-1.json",
        "reports/verify.json",
        "notes.txt",
        { verification: "v.json", review: "r.json" },
      ],
    });
    expect(canonical.verdict_pointer).toEqual([
      { kind: "review", ref: "outputs/review/T-1.json" },
      { kind: "verification", ref: "reports/verify.json" },
      { kind: "other", ref: "notes.txt" },
      { kind: "verification", ref: "v.json" },
      { kind: "review", ref: "r.json" },
    ]);
  });

  it("reads clean_state given as {blocking: [...]}, dropping empty entries", () => {
    const { canonical } = prepare({ summary: "s", clean_state: { blocking: ["untracked file x", "  ", { check: "lint" }] } });
    expect(canonical.clean_state).toEqual([{ detail: "untracked file x" }, { check: "lint", detail: "lint" }]);
  });

  it("uses repo when project is absent, lowercases status, and stringifies a numeric task id", () => {
    const { canonical } = prepare({ summary: "s", repo: " acme/web ", status: "Archived", task_id: 42 });
    expect(canonical.project).toBe("acme/web");
    expect(canonical.status).toBe("archived");
    expect(canonical.task_id).toBe("42");
  });

  it("reads epoch seconds given as a numeric string, and an ISO time without offset as UTC", () => {
    expect(prepare({ summary: "s", timestamp: "1795856220" }).canonical.created_at).toBe("2026-11-28T08:57:00.000Z");
    expect(prepare({ summary: "s", created_at: "2026-11-29 06:00:00" }).canonical.created_at).toBe("2026-11-29T06:00:00.000Z");
    expect(prepare({ summary: "s", created_at: "2026-11-29T06:00:00" }).canonical.created_at).toBe("2026-11-29T06:00:00.000Z");
  });

  it("prefers created_at over timestamp", () => {
    const { canonical } = prepare({ summary: "s", created_at: "2026-11-29T06:00:00Z", timestamp: 0 });
    expect(canonical.created_at).toBe("2026-11-29T06:00:00.000Z");
  });

  it("drops a timestamp too large to be a date", () => {
    const prepared = prepare({ summary: "s", timestamp: 1e15 });
    expect(prepared.canonical.created_at).toBeUndefined();
    expect(prepared.createdAtMs).toBeNull();
  });

  it("does not keep a human section in canonical or extra", () => {
    const { canonical } = prepare({ summary: "s", human: { revision: 2 }, x_note: "kept" });
    expect(canonical.extra).toEqual({ x_note: "kept" });
    expect(canonical).not.toHaveProperty("human");
  });
});

describe("null counts as absent", () => {
  it("drops null metadata and core fields from the canonical form", () => {
    const input = {
      summary: "s",
      changed_files: null,
      commands_run: null,
      failed_attempts: null,
      open_risks: null,
      next_action: null,
      verdict_pointer: null,
      thread: null,
      session_id: null,
      task_id: null,
      agent: null,
      project: null,
      branch: null,
      topic: null,
      status: null,
      created_at: null,
      clean_state: null,
      questions_for_human: null,
      verdict: null,
    };
    const prepared = preparePacket(input, RECEIVED_AT);
    expect(prepared.canonical).toEqual({ schema_version: 1, summary: "s", extra: {} });
    expect(codes(prepared)).toEqual(["missing_next_action", "missing_fields", "verdict_missing"]);
    expect(prepared.flags[1]?.reason).toBe(
      "Missing 6 core fields: changed_files, commands_run, failed_attempts, open_risks, next_action, verdict_pointer.",
    );
  });

  it("drops null optional parts of items", () => {
    const { canonical } = preparePacket(
      {
        changed_files: [{ path: "a.ts", change: null, additions: null, deletions: null }],
        commands_run: [{ command: "x", duration_ms: null }],
        open_risks: [{ severity: null, detail: "d", mitigation: null, id: null }],
        next_action: { action: "go", command: null, owner: null },
        verdict_pointer: { verdict: "v.json", review: null },
        verdict: { passed: null, review_total: null, review_verdict: null },
      },
      RECEIVED_AT,
    );
    expect(canonical.changed_files).toEqual([{ path: "a.ts" }]);
    expect(canonical.commands_run).toEqual([{ command: "x" }]);
    expect(canonical.open_risks?.[0]).toMatchObject({ id: "r0", severity: "medium", severity_raw: null });
    expect(canonical.open_risks?.[0]).not.toHaveProperty("mitigation");
    expect(canonical.next_action).toEqual({ text: "go" });
    expect(canonical.verdict_pointer).toEqual([{ kind: "verification", ref: "v.json" }]);
    expect(canonical.verdict).toBeUndefined();
  });

  it("falls back from a null created_at to timestamp", () => {
    const { canonical } = preparePacket({ summary: "s", created_at: null, timestamp: 1795856220 }, RECEIVED_AT);
    expect(canonical.created_at).toBe("2026-11-28T08:57:00.000Z");
  });
});

describe("question ids", () => {
  const ids = (questions: unknown[]) => {
    const input = { summary: "s", questions_for_human: questions };
    return normalisePacket(validatePacket(input), input).canonical.questions_for_human!.map((question) => question.id);
  };

  it("keeps explicit ids, and gives defaults that collide with one (or repeats) a suffix", () => {
    expect(ids([{ id: "q1", question: "A?" }, "B?"])).toEqual(["q1", "q1-2"]);
    expect(ids(["A?", { id: "q0", question: "B?" }])).toEqual(["q0-2", "q0"]);
    expect(ids([{ id: "x", question: "A?" }, { id: "x", question: "B?" }, "C?"])).toEqual(["x", "x-2", "q2"]);
    expect(ids(["A?", "B?"])).toEqual(["q0", "q1"]);
  });
});
