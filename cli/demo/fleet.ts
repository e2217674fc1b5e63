import "server-only";
import { ingestPacket } from "../../lib/ingest/ingest";

/**
 * A realistic demo fleet: 34 agents across five projects, 2 to 5 versions each,
 * in every shape the contract accepts, covering every severity and flag.
 * Deterministic for a given hour: loading it twice in one hour stores nothing new.
 */

const HOUR = 3_600_000;

interface AgentPlan {
  agent: string;
  project: string;
  branch: string;
  task: string;
  topic?: string;
  /** Hours ago of the newest version; above 24 the thread is stale. */
  newestHoursAgo: number;
  versions: number;
  shape: "full" | "lesson" | "workbench" | "strings";
  /** What the newest version carries. */
  ending: "clean" | "questions" | "critical" | "high" | "dirty" | "failed" | "sentinel" | "status" | "skew" | "unknown";
}

const PROJECTS = [
  { project: "acme/payments", area: "refunds", files: ["src/refunds/handler.ts", "src/refunds/queue.ts", "test/refunds.test.ts"] },
  { project: "acme/web", area: "checkout page", files: ["web/src/checkout/page.tsx", "web/src/checkout/form.tsx", "web/e2e/checkout.spec.ts"] },
  { project: "acme/platform", area: "terraform modules", files: ["infra/modules/vpc/main.tf", "infra/staging/main.tf", "infra/prod/main.tf"] },
  { project: "acme/mobile", area: "offline sync", files: ["app/sync/queue.kt", "app/sync/conflicts.kt", "app/sync/SyncTest.kt"] },
  { project: "acme/data", area: "billing pipeline", files: ["pipelines/billing/invoice.py", "pipelines/billing/tests/test_invoice.py", "dags/billing.py"] },
] as const;

const ENDINGS: AgentPlan["ending"][] = [
  "clean", "questions", "critical", "high", "dirty", "failed", "sentinel", "status", "clean", "questions", "unknown", "skew",
];
const SHAPES: AgentPlan["shape"][] = ["full", "lesson", "workbench", "strings"];
const ROLES = ["builder", "fixer", "reviewer", "migrator", "tester", "docs", "infra"];

/** The demo's own size; `baton demo --agents N` loads a larger fleet of the same mix. */
export const DEMO_AGENTS = 34;

function plans(agents = DEMO_AGENTS): AgentPlan[] {
  const out: AgentPlan[] = [];
  for (let i = 0; i < agents; i++) {
    const project = PROJECTS[i % PROJECTS.length]!;
    const role = ROLES[i % ROLES.length]!;
    const ending = ENDINGS[i % ENDINGS.length]!;
    out.push({
      agent: `${project.project.split("/")[1]}-${role}-${Math.floor(i / PROJECTS.length) + 1}`,
      project: project.project,
      branch: `${["feat", "fix", "chore"][i % 3]}/${project.area.replace(/\s+/g, "-")}-${100 + i}`,
      task: `${project.project.split("/")[1]!.slice(0, 3).toUpperCase()}-${300 + i}`,
      topic: i % 7 === 0 ? project.area : undefined,
      // Every fifth agent has gone quiet for two to four days.
      newestHoursAgo: i % 5 === 4 ? 48 + (i % 3) * 24 : (i % 9) + 0.5,
      versions: 2 + (i % 4),
      shape: SHAPES[i % SHAPES.length]!,
      ending,
    });
  }
  return out;
}

function risksFor(plan: AgentPlan, version: number, last: boolean) {
  const area = PROJECTS.find((p) => p.project === plan.project)!.area;
  const risks: { severity: string; detail: string; id?: string }[] = [
    { severity: "low", detail: `${area}: helper module is growing past 300 lines` },
  ];
  if (version > 1) risks.push({ severity: "info", detail: `${area}: examples still point at the staging host` });
  if (!last || plan.ending === "high") risks.push({ severity: "high", detail: `${area}: retries may run twice after a timeout` });
  if (plan.ending === "critical" && last) risks.push({ severity: "critical", detail: `${area}: prod plan deletes 3 resources` });
  if (plan.ending === "unknown" && last) risks.push({ severity: "urgent-ish", detail: `${area}: flaky test quarantined` });
  risks.push({ severity: "medium", detail: `${area}: timeout of ${30 + version * 15} seconds is a guess` });
  return risks;
}

function nextActionFor(plan: AgentPlan, version: number, last: boolean): string {
  if (last && plan.ending === "sentinel") return "no next_action recorded; needs human";
  const area = PROJECTS.find((p) => p.project === plan.project)!.area;
  const steps = [
    `write the failing test for ${area} first`,
    `make the ${area} tests pass without widening the timeout`,
    `split the ${area} helper and rerun the suite`,
    `open a pull request for ${area} and ask for review`,
    `address review comments on ${area}`,
  ];
  return steps[Math.min(version - 1, steps.length - 1)]!;
}

function packetFor(plan: AgentPlan, version: number, createdAtMs: number): Record<string, unknown> {
  const last = version === plan.versions;
  const files = PROJECTS.find((p) => p.project === plan.project)!.files;
  const risks = risksFor(plan, version, last);
  const next = nextActionFor(plan, version, last);
  const failed = last && plan.ending === "failed";
  const base: Record<string, unknown> = {
    task_id: plan.task,
    agent: plan.agent,
    project: plan.project,
    branch: plan.branch,
    ...(plan.topic ? { topic: plan.topic } : {}),
    summary: `Session ${version} of ${plan.task}: ${next.replace(/^./, (c) => c.toUpperCase())} (${files.length} files touched).`,
  };
  const verdictPointer = { verdict: `outputs/verification/${plan.task}.json`, review: `outputs/review/${plan.task}.json` };
  const skewMs = last && plan.ending === "skew" ? 3 * 24 * HOUR : 0;
  let packet: Record<string, unknown>;
  switch (plan.shape) {
    case "full":
      packet = {
        schema_version: 1,
        session_id: `${plan.agent}-s${version}`,
        ...base,
        agent: { name: plan.agent, kind: "claude-code", model: "opus" },
        last_known_good_commit: `c0ffee${version}`,
        created_at: new Date(createdAtMs + skewMs).toISOString(),
        changed_files: files.map((path, index) => ({ path, change: index ? "modified" : "added", additions: 10 * (index + version), deletions: index })),
        commands_run: [
          { command: ["npm", "test"], exit_code: failed ? 1 : 0, duration_ms: 8000 + version },
          { command: "npm run lint", exit_code: 0, duration_ms: 2100 },
        ],
        failed_attempts: failed ? [{ attempt: "npm test", reason: "2 assertions still fail", exit_code: 1 }] : [],
        open_risks: risks.map((risk, index) => ({ id: `r${index + 1}`, ...risk })),
        next_action: { action: next, command: "npm test", owner: "agent" },
        verdict_pointer: [{ verification: verdictPointer.verdict }, { review: verdictPointer.review }],
        verdict: { passed: !failed, review_total: failed ? 5 : 8, review_verdict: failed ? "soft_fail" : "pass" },
      };
      break;
    case "lesson":
      packet = {
        ...base,
        changed_files: files,
        commands_run: ["npm test", "['npm', 'run', 'lint']"],
        failed_attempts: failed ? ["npm test -> exit 1"] : [],
        open_risks: risks.map((risk) => ({ severity: risk.severity === "critical" ? "block" : risk.severity === "medium" ? "warn" : risk.severity, detail: risk.detail })),
        next_action: next,
        verdict_pointer: verdictPointer,
        feedback_tail: [{ command: "npm test", exit_code: failed ? 1 : 0 }],
        created_at: new Date(createdAtMs + skewMs).toISOString(),
        ...(failed ? { verdict: { passed: false, review_total: 6, review_verdict: "soft_fail" } } : {}),
      };
      break;
    case "workbench":
      packet = {
        session_id: `sess-${plan.task}-${version}`,
        timestamp: (createdAtMs + skewMs) / 1000,
        ...base,
        changed_files: files.slice(0, 2),
        commands_run: ["npm test -- --run", "npm run typecheck"],
        failed_attempts: [],
        open_risks: risks,
        next_action: next,
        verdict_pointer: verdictPointer,
        ...(failed ? { verdict: { passed: false } } : {}),
      };
      break;
    default:
      packet = {
        ...base,
        changed_files: files.slice(1),
        commands_run: ["make test"],
        failed_attempts: failed ? ["make test failed on the integration target"] : [],
        open_risks: risks.map((risk) => (risk.severity === "medium" ? risk.detail : risk)),
        next_action: next,
        verdict_pointer: `outputs/verification/${plan.task}.json`,
        created_at: new Date(createdAtMs + skewMs).toISOString(),
        ...(failed ? { verdict: { passed: false } } : {}),
      };
  }
  if (!last) return packet;
  switch (plan.ending) {
    case "questions":
      packet.questions_for_human = [
        { id: "q-scope", question: `May I also refactor the ${plan.project} config loader?`, options: ["yes", "no, keep scope"], blocking: true },
        "Which reviewer should take this pull request?",
      ];
      break;
    case "dirty":
      packet.clean_state = [
        { check: "working_tree", detail: `${files[0]} modified and not committed` },
        { check: "temp_artifacts", detail: "scratch/ left behind" },
      ];
      break;
    case "status":
      delete packet.next_action;
      delete packet.verdict_pointer;
      break;
  }
  return packet;
}

/** The fleet's packets, each agent's versions oldest first (also an ordinary-packet corpus for the redaction tests). */
export function demoFleetPackets(now = Date.now(), agents = DEMO_AGENTS): Record<string, unknown>[] {
  const anchor = Math.floor(now / HOUR) * HOUR;
  return plans(agents).flatMap((plan) =>
    Array.from({ length: plan.versions }, (_, i) => packetFor(plan, i + 1, anchor - (plan.newestHoursAgo + (plan.versions - i - 1) * 3) * HOUR)),
  );
}

/** Packets handed to the ingest path at once: its writer stores them in one transaction, in this order (lib/ingest/batch-writer.ts). */
const LOAD_TOGETHER = 64;

export async function loadDemoFleet(now = Date.now(), agents = DEMO_AGENTS): Promise<{ agents: number; threads: number; stored: number }> {
  const threads = new Set<string>();
  let stored = 0;
  const packets = demoFleetPackets(now, agents);
  // Together, not one by one: one commit (and one wait for the disk) per group instead of per packet.
  for (let start = 0; start < packets.length; start += LOAD_TOGETHER) {
    const group = packets.slice(start, start + LOAD_TOGETHER);
    for (const result of await Promise.all(group.map((packet) => ingestPacket(packet, { kind: "cli", actor: "demo" })))) {
      threads.add(result.thread_key);
      if (!result.duplicate) stored++;
    }
  }
  return { agents, threads: threads.size, stored };
}
