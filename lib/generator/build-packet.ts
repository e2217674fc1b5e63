import "server-only";
import { packetInputSchema, SHAPES } from "../contract/schema";
import { commandText } from "../contract/commands";
import { REVIEW_PASS_TOTAL } from "../contract/lint";
import { NEXT_ACTION_SENTINEL } from "../contract/normalise";
import { severityRank } from "../contract/severity";
import { boundCommand, COMMANDS_RUN_MAX, failureReason, isFailing, trimFeedback } from "./feedback";
import type { GitChangedFile, GitState } from "./git";
import type { Workbench } from "./read";
import { WORKBENCH_PATHS, type CleanStateProblem, type DiffSummary } from "./schemas";

/**
 * Builds the packet from what was read: a pure function of its inputs, with a
 * fixed key order and no clock, so the same workbench gives the same bytes.
 */

export interface PacketInputs {
  bench: Workbench;
  git: GitState;
  sessionId: string;
  createdAt: string | null;
  project: string;
  agent: NonNullable<Workbench["state"]>["agent"];
  lastKnownGoodCommit: string | null;
  changedFiles: DiffSummary["touched"] | GitChangedFile[] | null;
  problems: CleanStateProblem[];
  k: number;
  notes: string[];
}

/** Severities of generated risks, in the contract's words (docs/decisions/016-feedback-trimming.md). */
export const GENERATED_SEVERITY = { blocker: "high", lowReviewTotal: "medium", dirtyState: "high", unexplainedFailure: "high" } as const;

type Risk = { id: string; severity?: string; detail: string };

export function buildPacket(inputs: PacketInputs): Record<string, unknown> {
  const { bench, git } = inputs;
  const state = bench.state;
  const feedback = feedbackFields(bench, inputs.k);
  const packet: Record<string, unknown> = {
    schema_version: 1,
    session_id: inputs.sessionId,
    task_id: bench.taskId ?? undefined,
    agent: inputs.agent ?? undefined,
    project: inputs.project,
    branch: git.branch ?? undefined,
    // null, not left out: "no commit is known to be good" is something the next session should read.
    last_known_good_commit: inputs.lastKnownGoodCommit,
    // Not in the contract (kept as an extra): where this session ended, the next one's diff base.
    head_commit: git.head ?? undefined,
    created_at: inputs.createdAt ?? undefined,
    status: "active",
    summary: summarise(inputs),
    changed_files: inputs.changedFiles ?? undefined,
    commands_run: feedback?.commandsRun,
    failed_attempts: feedback?.failedAttempts,
    open_risks: risks(inputs),
    next_action: nextAction(state?.next_action),
    verdict_pointer: verdictPointer(bench),
    verdict: inlineVerdict(bench),
    assumptions_to_validate: assumptionsToValidate(bench),
    questions_for_human: state ? state.questions : undefined,
    preconditions: preconditions(bench),
    clean_state: inputs.problems,
    feedback_tail: feedback?.tail,
    feedback_log: feedback?.log,
    usage: contractShaped("usage", state?.usage, inputs.notes),
    pull_request: contractShaped("pull_request", state?.pull_request, inputs.notes),
    workbench_notes: inputs.notes,
  };
  // JSON.stringify drops undefined values; removing them here keeps hashing and writing in agreement.
  for (const key of Object.keys(packet)) if (packet[key] === undefined) delete packet[key];
  return packet;
}

/** Everything taken from feedback_record.jsonl; absent without the log (nothing recorded is not "nothing ran"). */
function feedbackFields(bench: Workbench, k: number) {
  if (!bench.feedback) return null;
  const { records, malformed } = bench.feedback;
  const { tail, failingOmitted } = trimFeedback(bench.feedback, k);
  const recordAt = new Map(records.map((entry) => [entry.line, entry.record]));
  return {
    commandsRun: records.slice(-COMMANDS_RUN_MAX).map(({ record }) => ({
      command: boundCommand(record.command),
      exit_code: record.exit_code ?? null,
      duration_ms: record.duration_ms ?? undefined,
    })),
    failedAttempts: tail
      .filter((record) => record.exit_code !== 0)
      .map((record) => {
        const reason = failureReason(recordAt.get(record.line)!);
        return { attempt: commandText(record.command), ...(reason ? { reason } : {}), exit_code: record.exit_code };
      }),
    tail,
    log: {
      path: WORKBENCH_PATHS.feedback,
      records: records.length,
      failing: records.filter(({ record }) => isFailing(record)).length,
      in_tail: tail.length,
      failing_omitted: failingOmitted,
      malformed_lines: malformed,
    },
  };
}

/** Workbench files many projects do not keep (docs/cli.md#baton-generate). */
const OPTIONAL_FILES: ReadonlySet<string> = new Set([WORKBENCH_PATHS.featureList]);

function summarise({ bench, problems, changedFiles }: PacketInputs): string {
  const parts: string[] = [];
  const lead = bench.state?.summary?.trim();
  if (lead) parts.push(lead.replace(/[.\s]*$/, "."));
  const facts: string[] = [];
  const { verification, review } = bench;
  if (verification) {
    const counts = new Map<string, number>();
    for (const group of verification.findings) {
      for (const item of group.items) counts.set(item.severity_raw ?? item.severity, (counts.get(item.severity_raw ?? item.severity) ?? 0) + 1);
    }
    const detail = counts.size ? ` (${[...counts].map(([word, count]) => `${count} ${word}`).join(", ")})` : "";
    facts.push(`verification ${verification.passed ? "passed" : "did not pass"}${detail}`);
  }
  if (review) facts.push(`review ${review.verdict}, ${review.total}/10`);
  if (changedFiles) facts.push(`${changedFiles.length} changed file${changedFiles.length === 1 ? "" : "s"}`);
  if (bench.feedback) {
    const records = bench.feedback.records;
    const failed = records.filter(({ record }) => isFailing(record)).length;
    facts.push(`${records.length} command${records.length === 1 ? "" : "s"} run, ${failed} failed`);
  }
  parts.push(`${bench.taskId ? `Task ${bench.taskId}` : "No task id recorded"}${facts.length ? `: ${facts.join("; ")}` : ""}.`);
  // Optional files that are absent are listed in workbench_notes only: not news for the summary.
  const missing = bench.missing.filter((file) => !OPTIONAL_FILES.has(file));
  if (missing.length) parts.push(`Not found: ${missing.join(", ")}.`);
  if (problems.length) parts.push(`Handed off with ${problems.length} clean-state problem${problems.length === 1 ? "" : "s"} (--allow-dirty).`);
  return parts.join(" ");
}

function risks({ bench, problems }: PacketInputs): Risk[] {
  const out: Risk[] = [];
  const ids = new Set<string>();
  const add = (id: string, severity: string | undefined, detail: string) => {
    let unique = id;
    for (let n = 2; ids.has(unique); n++) unique = `${id}-${n}`;
    ids.add(unique);
    out.push(severity === undefined ? { id: unique, detail } : { id: unique, severity, detail });
  };
  const { verification, review } = bench;
  let findingRisks = 0;
  // Groups come highest severity first; within a group, in the report's order.
  for (const item of verification?.findings.flatMap((group) => group.items) ?? []) {
    if (item.severity_known && severityRank(item.severity) < severityRank("medium")) continue;
    findingRisks++;
    // An unrecognised word is passed on as written, so Baton flags unknown_severity instead of the generator guessing.
    add(item.code ?? "finding", item.severity_known ? item.severity : (item.severity_raw ?? undefined), item.code ? `${item.code}: ${item.detail}` : item.detail);
  }
  if (verification && !verification.passed && findingRisks === 0) {
    add("verification", GENERATED_SEVERITY.unexplainedFailure, "verification did not pass and names no blocking or warning finding");
  }
  bench.state?.blockers.forEach((blocker) => add("blocker", GENERATED_SEVERITY.blocker, `blocker: ${blocker}`));
  if (review && review.total < REVIEW_PASS_TOTAL) {
    add("review-total", GENERATED_SEVERITY.lowReviewTotal, `review total ${review.total}/10 is below ${REVIEW_PASS_TOTAL} (verdict ${review.verdict})`);
  }
  for (const problem of problems) add(`clean-state-${problem.check}`, GENERATED_SEVERITY.dirtyState, `workbench not clean (${problem.check}): ${problem.detail}`);
  return out;
}

/** The state's next action as written; when there is none, the contract's sentinel, so Baton flags it. Never invented. */
function nextAction(value: NonNullable<Workbench["state"]>["next_action"] | undefined): unknown {
  if (typeof value === "string" && value.trim()) return value;
  if (value && typeof value === "object" && (value.action?.trim() || value.description?.trim())) return value;
  return NEXT_ACTION_SENTINEL;
}

/** Relative to the workspace root, as the contract's reference shapes write them; only reports that exist. */
function verdictPointer(bench: Workbench): Record<string, string> | undefined {
  if (!bench.taskId) return undefined;
  const pointer: Record<string, string> = {};
  if (bench.verification) pointer.verdict = WORKBENCH_PATHS.verification(bench.taskId);
  if (bench.review) pointer.review = WORKBENCH_PATHS.review(bench.taskId);
  return Object.keys(pointer).length ? pointer : undefined;
}

function inlineVerdict({ verification, review }: Workbench): Record<string, unknown> | undefined {
  if (!verification && !review) return undefined;
  return {
    ...(verification ? { passed: verification.passed } : {}),
    ...(review ? { review_total: review.total, review_verdict: review.verdict } : {}),
  };
}

/**
 * The builder's assumptions that no reviewer confirmed: all of them when the
 * review's `assumptions` dimension scored 1 or less, or when no review scored
 * that dimension at all; none when it scored 2.
 */
function assumptionsToValidate({ state, review }: Workbench): unknown[] | undefined {
  if (!state) return undefined;
  const score = review?.dimensions.find((dimension) => dimension.name === "assumptions")?.score;
  if (score === undefined) return state.assumptions;
  return score <= 1 ? state.assumptions.map((text) => ({ text, score })) : [];
}

/** The artifacts the next session must load before acting, those that exist, in reading order. */
function preconditions(bench: Workbench): string[] {
  const wanted: string[] = [WORKBENCH_PATHS.state, WORKBENCH_PATHS.featureList];
  if (bench.taskId) wanted.push(WORKBENCH_PATHS.verification(bench.taskId), WORKBENCH_PATHS.review(bench.taskId));
  return [...wanted.filter((file) => bench.read.includes(file)), WORKBENCH_PATHS.cleanState, ...(bench.read.includes(WORKBENCH_PATHS.feedback) ? [WORKBENCH_PATHS.feedback] : [])];
}

/** A state field passed on as written when the contract accepts it; otherwise left out, with a note saying why. */
function contractShaped(field: "usage" | "pull_request", value: unknown, notes: string[]): unknown {
  if (value === undefined || value === null) return undefined;
  if (packetInputSchema.shape[field].safeParse(value).success) return value;
  notes.push(`${field}: agent_state.json's ${field} is not in the contract's shape (${SHAPES[field]}); left out`);
  return undefined;
}
