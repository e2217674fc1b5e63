import { z } from "zod";

/**
 * The workbench files an agent leaves behind (docs/cli.md), as zod. The verification
 * and review reports are parsed by lib/views/verdict/reports.ts, the same parser the
 * thread page uses, so a report reads the same here and there.
 */

/** Where each artifact lives, relative to the workspace root (the folder holding `outputs/`). */
export const WORKBENCH_PATHS = {
  state: "agent_state.json",
  feedback: "feedback_record.jsonl",
  featureList: "feature_list.json",
  diffSummary: "outputs/diff_summary.json",
  cleanState: "outputs/clean_state.json",
  handoffDir: "outputs/handoff",
  verification: (taskId: string) => `outputs/verification/${taskId}.json`,
  review: (taskId: string) => `outputs/review/${taskId}.json`,
} as const;

/** A task or session id becomes a file or folder name: one safe path segment, nothing more. */
export const pathSegment = z
  .string()
  .regex(/^(?!\.{1,2}$)[A-Za-z0-9._-]{1,128}$/, "use 1 to 128 letters, digits, dots, dashes or underscores (it becomes a file or folder name)");

const text = z.string();
const taskId = z.union([text, z.number().int()]).transform(String);
const argv = z.array(text).min(1);

/** The contract's next_action shapes, so the state's value passes to the packet as written. */
const nextAction = z.union([
  text,
  z.looseObject({ action: text.nullish(), description: text.nullish(), command: z.union([text, argv]).nullish(), owner: text.nullish() }),
]);

const question = z.union([
  text,
  z.looseObject({
    id: z.union([text, z.number()]).nullish(),
    question: text,
    context: text.nullish(),
    options: z.array(text).nullish(),
    blocking: z.boolean().nullish(),
  }),
]);

export const agentStateSchema = z.looseObject({
  schema_version: z.union([z.literal(1), z.literal("1")]).optional(),
  active_task_id: taskId.nullish(),
  touched_files: z.array(text).default([]),
  assumptions: z.array(text).default([]),
  blockers: z.array(text).default([]),
  next_action: nextAction.nullish(),
  questions: z.array(question).default([]),
  // Optional extras a runner may record; the shape does not require them.
  agent: z.union([text, z.looseObject({ name: text, kind: text.nullish(), model: text.nullish() })]).nullish(),
  summary: text.nullish(),
  branch: text.nullish(),
  // What the session cost and the branch's pull request, in the contract's shapes (checked when the packet is built).
  usage: z.unknown().optional(),
  pull_request: z.unknown().optional(),
});
export type AgentState = z.infer<typeof agentStateSchema>;

export const feedbackRecordSchema = z.looseObject({
  command: z.union([text.min(1), argv], { error: "expected the command as a non-empty string or argv array of strings" }),
  // Absent counts as null: a run whose outcome nobody recorded did not pass.
  exit_code: z.number().int().nullable().optional(),
  duration_ms: z.number().nonnegative().nullish(),
  started_at: z.union([text, z.number().nonnegative()]).nullish(),
  stdout_tail: text.nullish(),
  stderr_tail: text.nullish(),
});
export type FeedbackRecord = z.infer<typeof feedbackRecordSchema>;

export const diffSummarySchema = z.looseObject({
  touched: z.array(
    z.union([
      text,
      z.looseObject({ path: text, change: text.nullish(), additions: z.number().nullish(), deletions: z.number().nullish() }),
    ]),
  ),
});
export type DiffSummary = z.infer<typeof diffSummarySchema>;

export const featureListSchema = z.looseObject({
  project: text.nullish(),
  active: taskId.nullish(),
  features: z.array(
    z.looseObject({ id: taskId, status: text, goal: text.nullish(), done_when: z.unknown().optional() }),
  ),
});
export type FeatureList = z.infer<typeof featureListSchema>;

/** One blocking problem found by `baton check`, as the contract's clean_state items. */
export const cleanStateProblemSchema = z.object({ check: text, detail: text });
export type CleanStateProblem = z.infer<typeof cleanStateProblemSchema>;

/** outputs/clean_state.json: the contract's `{blocking: [...]}` shape, empty when clean. */
export const cleanStateFileSchema = z.object({ clean: z.boolean(), blocking: z.array(cleanStateProblemSchema) });
export type CleanStateFile = z.infer<typeof cleanStateFileSchema>;
