/**
 * Realistic, distinct handoff packets in the contract's "full" shape
 * (docs/contract.md), about 4 KB each.
 *
 * Packet `seq` belongs to thread `seq % threads`, so every thread receives a
 * stream of versions and ingest runs its supersede logic; `created_at` grows
 * with `seq`, so each new version of a thread is the newer one.
 */

export const TARGET_BYTES = 4096;
/** Sizes spread over TARGET_BYTES ± this many bytes (just under 5 %). */
const SIZE_SPREAD = 200;

const PROJECTS = [
  { project: "acme/payments", area: "refunds", files: ["src/refunds/handler.ts", "src/refunds/queue.ts", "src/refunds/ledger.ts", "test/refunds.test.ts"] },
  { project: "acme/web", area: "checkout page", files: ["web/src/checkout/page.tsx", "web/src/checkout/form.tsx", "web/src/checkout/api.ts", "web/e2e/checkout.spec.ts"] },
  { project: "acme/platform", area: "terraform modules", files: ["infra/modules/vpc/main.tf", "infra/modules/vpc/outputs.tf", "infra/staging/main.tf", "infra/prod/main.tf"] },
  { project: "acme/mobile", area: "offline sync", files: ["app/sync/queue.kt", "app/sync/conflicts.kt", "app/sync/store.kt", "app/sync/SyncTest.kt"] },
  { project: "acme/data", area: "billing pipeline", files: ["pipelines/billing/invoice.py", "pipelines/billing/tax.py", "pipelines/billing/tests/test_invoice.py", "dags/billing.py"] },
] as const;

const ROLES = ["builder", "fixer", "reviewer", "migrator", "tester", "docs", "infra", "perf"] as const;
// Canonical and non-canonical words, so severity normalisation does real work.
const SEVERITY_WORDS = ["critical", "block", "high", "p1", "medium", "warn", "low", "minor", "info", "note"] as const;
const STEPS = [
  "write the failing test first",
  "make the tests pass without widening the timeout",
  "split the helper module and rerun the suite",
  "open a pull request and ask for review",
  "address the review comments",
] as const;
// Filler that pads the summary to the target size: plain ASCII, so one character is one byte.
const FILLER = [
  "Reproduced the original report locally before changing anything.",
  "The retry path now records the attempt number in the structured log.",
  "Left the feature flag off by default until the migration has run in staging.",
  "Benchmarked the hot loop before and after; no measurable regression.",
  "Two snapshot tests were regenerated after checking the diff by hand.",
  "Lint and type checks pass; the slow integration suite was run once.",
  "Documented the new environment variable in the operations runbook.",
  "Removed a dead branch that the coverage report showed was never taken.",
] as const;

const pick = <T>(items: readonly T[], index: number): T => items[index % items.length]!;

/** Letters only: the risk fingerprint ignores digit-only tokens, so unique risks need letters. */
function letters(n: number): string {
  let out = "";
  do {
    out = String.fromCharCode(97 + (n % 26)) + out;
    n = Math.floor(n / 26);
  } while (n > 0);
  return out;
}

export interface PacketFactory {
  /**
   * The JSON text of packet `seq`: the same `seq` always gives the same text, distinct
   * `seq`s distinct packets. Its size is `bytes`, or spread around TARGET_BYTES by `seq`.
   */
  body(seq: number, bytes?: number): string;
}

export function packetFactory(runId: string, threads: number, startMs: number): PacketFactory {
  const runTag = letters(parseInt(runId.slice(0, 8), 16));
  return {
    body(seq, bytes = TARGET_BYTES - SIZE_SPREAD + ((seq * 7919) % (2 * SIZE_SPREAD + 1))) {
      return padToSize(packet(seq, threads, runId, runTag, startMs), bytes, seq);
    },
  };
}

function packet(seq: number, threads: number, runId: string, runTag: string, startMs: number): Record<string, unknown> {
  const thread = seq % threads;
  const version = Math.floor(seq / threads) + 1;
  const { project, area, files } = pick(PROJECTS, thread);
  const short = project.split("/")[1]!;
  const task = `${short.slice(0, 3).toUpperCase()}-${400 + thread}`;
  const tag = `${runTag}-${letters(seq)}`;
  const next = pick(STEPS, version - 1);
  const failed = seq % 6 === 0;
  return {
    schema_version: 1,
    session_id: `bench-${runId}-${seq}`,
    task_id: task,
    agent: { name: `${short}-${pick(ROLES, thread)}-${(thread % 5) + 1}`, kind: "claude-code", model: "opus" },
    project,
    branch: `feat/${area.replace(/\s+/g, "-")}-${thread}`,
    last_known_good_commit: (seq * 2654435761).toString(16).padStart(12, "0").slice(-12),
    created_at: new Date(startMs + seq).toISOString(),
    summary: `Session ${version} of ${task} (${area}, run ${tag}): ${next}.`,
    changed_files: files.map((path, index) => ({
      path,
      change: index === 0 && version === 1 ? "added" : "modified",
      additions: 3 + ((seq + index * 17) % 90),
      deletions: (seq + index * 5) % 40,
    })),
    commands_run: [
      { command: ["npm", "test", "--", `--grep=${area}`], exit_code: failed ? 1 : 0, duration_ms: 4000 + (seq % 9000) },
      { command: "npm run lint", exit_code: 0, duration_ms: 1500 + (seq % 700) },
      { command: "npm run typecheck", exit_code: 0, duration_ms: 6100 + (seq % 1300) },
    ],
    failed_attempts: failed
      ? [{ attempt: "npm test", reason: `2 assertions in ${files[files.length - 1]} still fail (case ${tag})`, exit_code: 1 }]
      : [],
    open_risks: [
      // The same detail on every version of a thread: the same risk carried over.
      { id: "r1", severity: pick(SEVERITY_WORDS, thread), detail: `${area}: helper module is growing past 300 lines` },
      { id: "r2", severity: pick(SEVERITY_WORDS, seq), detail: `${area}: retries may run twice after a timeout in case ${tag}`, mitigation: "add an idempotency key to the queue message" },
      { id: "r3", severity: pick(SEVERITY_WORDS, seq + 3), detail: `${area}: fixture data for ${tag} is generated, not reviewed` },
    ],
    next_action: { action: `${next} for ${area}`, command: "npm test", owner: "agent" },
    verdict_pointer: { verdict: `outputs/verification/${task}.json`, review: `outputs/review/${task}.json` },
    assumptions_to_validate: [`the ${area} staging data matches production shape`, { text: `timeouts above ${30 + (seq % 60)} s are never hit`, score: 0.6 }],
    ...(seq % 4 === 0
      ? { questions_for_human: [{ id: "q1", question: `Keep the old ${area} endpoint for run ${tag}?`, options: ["yes", "no"], blocking: false }] }
      : {}),
  };
}

/** Pads the summary with filler sentences so that the JSON text is `target` bytes long. */
function padToSize(value: Record<string, unknown>, target: number, seq: number): string {
  const missing = target - Buffer.byteLength(JSON.stringify(value));
  if (missing <= 0) return JSON.stringify(value);
  let filler = "";
  for (let i = 0; filler.length < missing; i++) filler += ` ${pick(FILLER, seq + i)}`;
  return JSON.stringify({ ...value, summary: `${value.summary as string}${filler.slice(0, missing)}` });
}
