import type { FlagCode } from "../../lib/contract/lint";
import type { Severity } from "../../lib/contract/severity";
import type { Column } from "../../lib/board/columns";
import { agentState, featureList, jsonl, makeTestWorkbench, passingTests, review, type TestWorkbench } from "@/testing/generator/workbench";

/**
 * The fixture workbenches of the golden-file and ingest tests,
 * each with what Baton should make of its packet.
 */
export interface Scenario {
  name: string;
  build(): Promise<TestWorkbench>;
  allowDirty?: boolean;
  k?: number;
  expected: { flags: FlagCode[]; column: Column; risks: Partial<Record<Severity, number>> };
}

const LONG_STDERR = `${"webpack compiled module graph ".repeat(170)}\nError: build failed: cannot resolve ./tax`;

export const SCENARIOS: Scenario[] = [
  {
    name: "clean-pass",
    async build() {
      const bench = await makeTestWorkbench({ git: true });
      await bench.write("src/invoice.ts", "export const total = (cents: number[]) => cents.reduce((a, b) => a + b, 0);\n");
      await bench.write("feature_list.json", featureList("T-022"));
      bench.commit("T-022: invoice totals");
      await bench.write("agent_state.json", agentState("T-022"));
      await bench.write("outputs/verification/T-022.json", { task_id: "T-022", passed: true, findings: [] });
      await bench.write("outputs/review/T-022.json", review("T-022", 9, "pass", 2));
      await bench.write("feedback_record.jsonl", jsonl([passingTests(), { command: ["npx", "eslint", "src"], exit_code: 0, duration_ms: 2100 }]));
      return bench;
    },
    expected: { flags: [], column: "ready", risks: {} },
  },
  {
    name: "failing-verification",
    async build() {
      const bench = await makeTestWorkbench({ git: true });
      await bench.write("src/invoice.ts", "export const total = 1;\n");
      await bench.write("feature_list.json", featureList("T-014"));
      bench.commit("T-014: rounding");
      await bench.write(
        "agent_state.json",
        agentState("T-014", {
          assumptions: ["all currencies use 2 decimals", "rounding happens per invoice, not per line"],
          next_action: { action: "revert the edit to migrations/001.sql and move the change into a new migration", command: "npm run db:new-migration" },
        }),
      );
      await bench.write("outputs/verification/T-014.json", {
        task_id: "T-014",
        passed: false,
        findings: [
          { code: "coverage.minor_regression", severity: "info", detail: "coverage 0.74 -> 0.71" },
          { code: "scope.off_scope", severity: "warn", detail: "off-scope: docs/billing.md" },
          { code: "scope.forbidden_file", severity: "block", detail: "edited migrations/001.sql, which the task forbids" },
        ],
      });
      await bench.write("outputs/review/T-014.json", review("T-014", 8, "pass", 1));
      await bench.write("feedback_record.jsonl", jsonl([passingTests()]));
      return bench;
    },
    expected: { flags: ["verdict_failed"], column: "needs_you", risks: { critical: 1, medium: 1 } },
  },
  {
    name: "low-review-total",
    async build() {
      const bench = await makeTestWorkbench();
      await bench.write("feature_list.json", featureList("T-040"));
      await bench.write(
        "agent_state.json",
        agentState("T-040", {
          blockers: ["waiting for the EU tax table from finance"],
          assumptions: ["VAT is charged on the shipping line too"],
          questions: [
            { id: "q-tax", question: "Which tax table applies to EU invoices?", options: ["2025", "2026"], blocking: true },
            "Should rounding happen per line or per invoice?",
          ],
        }),
      );
      await bench.write("outputs/verification/T-040.json", { task_id: "T-040", passed: true, head_commit: "4e1c9a2", findings: [] });
      await bench.write("outputs/review/T-040.json", review("T-040", 5, "soft_fail", 0));
      await bench.write("outputs/diff_summary.json", { touched: ["src/tax.ts", "src/tax.test.ts"] });
      await bench.write("feedback_record.jsonl", jsonl([passingTests()]));
      return bench;
    },
    expected: { flags: ["verdict_failed", "open_questions"], column: "needs_you", risks: { high: 1, medium: 1 } },
  },
  {
    name: "missing-state",
    async build() {
      const bench = await makeTestWorkbench();
      await bench.write("feature_list.json", featureList("T-031"));
      await bench.write("outputs/verification/T-031.json", { task_id: "T-031", passed: true, findings: [] });
      await bench.write("feedback_record.jsonl", jsonl([passingTests()]));
      return bench;
    },
    expected: { flags: ["missing_next_action", "missing_fields"], column: "needs_you", risks: {} },
  },
  {
    name: "argv-and-null-exits",
    k: 2,
    async build() {
      const bench = await makeTestWorkbench();
      await bench.write("feature_list.json", featureList("T-050"));
      await bench.write("agent_state.json", agentState("T-050"));
      await bench.write("outputs/verification/T-050.json", { task_id: "T-050", passed: true, findings: [] });
      await bench.write("outputs/review/T-050.json", review("T-050", 8, "pass", 2));
      await bench.write("outputs/diff_summary.json", {
        touched: [{ path: "src/build.ts", change: "modified", additions: 12, deletions: 3 }, "package.json"],
      });
      await bench.write(
        "feedback_record.jsonl",
        jsonl([
          { command: ["npm", "ci"], exit_code: 0, duration_ms: 30000, started_at: "2026-11-20T08:00:00Z", stdout_tail: "added 812 packages ".repeat(100) },
          { command: ["npm", "run", "dev"], exit_code: null, duration_ms: 600000, stderr_tail: "ready on :3000\nkilled after 10 minutes" },
          '{"command": "npm test", "exit_code": 1',
          { command: "npm run build", stderr_tail: LONG_STDERR },
          { command: ["npm", "run", "lint"], exit_code: 2, stderr_tail: "src/build.ts: 3 problems" },
          { command: "git status --short", exit_code: 0 },
          { command: ["npm", "test", "--", "--reporter=dot"], exit_code: 0, stderr_tail: `${"(node) ExperimentalWarning: VM modules ".repeat(30)}\n` },
          { command: ["echo", "it's done"], exit_code: 0, started_at: 1795165200 },
          { cmd: "oops", exit_code: 0 },
        ]),
      );
      return bench;
    },
    expected: { flags: [], column: "ready", risks: {} },
  },
  {
    name: "dirty-allowed",
    allowDirty: true,
    async build() {
      const bench = await makeTestWorkbench({ git: true });
      await bench.write("src/invoice.ts", "export const total = 1;\n");
      await bench.write(
        "feature_list.json",
        featureList("T-052", [
          { id: "T-052", status: "done" },
          { id: "T-053", status: "in_progress" },
          { id: "T-054", status: "in-progress" },
        ]),
      );
      bench.commit("T-052: start");
      await bench.write("src/invoice.ts", "export const total = 2;\n");
      await bench.write("notes.txt", "remember the prod plan\n");
      await bench.write("build/cache.tmp", "partial\n");
      await bench.write("scratch/try.sql", "select 1;\n");
      await bench.write("agent_state.json", agentState("T-052", { branch: "feat/invoice-total" }));
      await bench.write("outputs/verification/T-052.json", { task_id: "T-052", passed: true, findings: [] });
      await bench.write("outputs/review/T-052.json", review("T-052", 8, "pass", 2));
      await bench.write("feedback_record.jsonl", jsonl([passingTests(), { command: "pytest -x tests/", exit_code: 1, stderr_tail: "E   AssertionError: 2 != 1" }]));
      return bench;
    },
    expected: { flags: ["dirty_state"], column: "needs_you", risks: { high: 10 } },
  },
];

/** An earlier packet of the superseding scenario's thread, as an agent (and Baton's write-back) left it. */
export function earlierPacket(lastKnownGood: string) {
  return {
    schema_version: 1,
    session_id: "sess-earlier",
    task_id: "T-060",
    project: "acme/billing",
    branch: "main",
    last_known_good_commit: lastKnownGood,
    head_commit: lastKnownGood,
    created_at: "2026-11-19T17:00:00Z",
    status: "active",
    summary: "Task T-060: started the tax module.",
    changed_files: ["src/invoice.ts"],
    commands_run: ["npm test"],
    failed_attempts: [],
    open_risks: [{ severity: "low", detail: "tax module is a stub" }],
    next_action: "implement EU VAT in src/tax.ts",
    verdict_pointer: { verdict: "outputs/verification/T-060.json" },
    x_runner: { attempt: 3, tags: ["nightly", "eu"] },
    human: { revision: 1, decision: { kind: "approved", by: "mei", at: "2026-11-19T18:00:00Z" } },
  };
}

/** Two sessions of T-060: the first left a packet at its commit; the second committed more and fails verification. */
export async function buildSupersedingScenario(): Promise<{ bench: TestWorkbench; firstCommit: string }> {
  const bench = await makeTestWorkbench({ git: true });
  await bench.write("src/invoice.ts", "export const total = 1;\n");
  await bench.write("src/legacy.ts", "export {};\n");
  await bench.write("feature_list.json", featureList("T-060"));
  const firstCommit = bench.commit("T-060: session one", "2026-11-19T16:00:00Z");
  await bench.write("outputs/handoff/sess-earlier/handoff.json", earlierPacket(firstCommit));
  await bench.write("outputs/handoff/sess-other/handoff.json", { ...earlierPacket(firstCommit), session_id: "sess-other", task_id: "T-099" });
  await bench.write("outputs/handoff/notes/handoff.json", "[1, 2]\n");
  await bench.write("src/invoice.ts", "export const total = 2;\n");
  await bench.write("src/tax.ts", "export const vat = 0.2;\n");
  bench.git("rm", "-q", "src/legacy.ts");
  bench.commit("T-060: session two");
  await bench.write("agent_state.json", agentState("T-060", { touched_files: ["src/tax.ts"] }));
  await bench.write("outputs/verification/T-060.json", {
    task_id: "T-060",
    passed: false,
    findings: [{ code: "acceptance.failed", severity: "block", detail: "test_eu_vat still red" }],
  });
  await bench.write("outputs/review/T-060.json", review("T-060", 7, "pass", 2));
  await bench.write("feedback_record.jsonl", jsonl([passingTests()]));
  return { bench, firstCommit };
}
