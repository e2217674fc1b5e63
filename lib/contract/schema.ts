import { z } from "zod";

/**
 * The contract's accepted shapes (docs/contract.md#fields), as zod; `null` counts as absent.
 * Each field's error message lists the shapes it accepts: a refused producer reads it.
 */

export const CORE_FIELDS = [
  "summary",
  "changed_files",
  "commands_run",
  "failed_attempts",
  "open_risks",
  "next_action",
  "verdict_pointer",
] as const;
export type CoreField = (typeof CORE_FIELDS)[number];

/** Limits, beside the schema they bound. */
export const PACKET_MAX_BYTES = 1024 * 1024;
export const BATCH_MAX_BYTES = 8 * 1024 * 1024;
export const BATCH_MAX_PACKETS = 100;
export const JSON_MAX_DEPTH = 64;

/**
 * What one packet may hold, besides its 1 MiB (docs/contract.md#limits). Lists past these
 * are refused (400 naming the field and the limit): no agent writes more, and every view
 * of a packet stays bounded. Pages that list items across packets page them.
 */
export const PACKET_LIST_LIMITS = {
  open_risks: 5_000,
  questions_for_human: 1_000,
  changed_files: 10_000,
  commands_run: 5_000,
  failed_attempts: 1_000,
  feedback_tail: 1_000,
  clean_state: 1_000,
  assumptions_to_validate: 1_000,
  preconditions: 1_000,
  verdict_pointer: 100,
} as const;

function accepts<T extends z.ZodType>(schema: T, shapes: string) {
  return schema.nullish().meta({ description: `Accepts ${shapes}.` }) as unknown as z.ZodOptional<z.ZodNullable<T>>;
}

const fail = (shapes: string) => ({ error: () => `accepts ${shapes}` });

const text = z.string();
const finiteNumber = z.number().refine(Number.isFinite);
const exitCode = z.union([z.number().int(), z.null()]);
const argvOrText = z.union([text, z.array(text)]);

export const SHAPES = {
  summary: "a string",
  changed_files: "an array of strings or of objects {path, change?, additions?, deletions?}",
  commands_run:
    "an array of strings or of objects {command, exit_code?, duration_ms?}, where command is a string or an argv array of strings",
  failed_attempts:
    "an array of strings or of objects {attempt|command, reason|why|error?, exit_code?}",
  open_risks:
    "an array of strings or of objects {severity?, detail|description|risk|text, id?, mitigation?}",
  next_action: "a string, or an object {action|description, command?, owner?}",
  verdict_pointer:
    "a string (path or URL), an object {verdict|verification?, review?}, or an array of those",
  schema_version: '1, "1" or "baton.handoff/v1"',
  string: "a string",
  agent: "a string, or an object {name, kind?, model?}",
  timestamp:
    "an ISO-8601 string, or epoch seconds as a number or numeric string",
  feedback_tail: "an array of objects {command, exit_code, ...}",
  clean_state: "an array of strings or of objects {check, detail}, or an object {blocking: [...]}",
  assumptions_to_validate: "an array of strings or of objects {text, score?}",
  questions_for_human:
    "an array of strings or of objects {id?, question, context?, options?: string[], blocking?: boolean}",
  preconditions: "an array of strings",
  verdict: "an object {passed?: boolean, review_total?: number, review_verdict?: string}",
  pull_request:
    "a URL string, a number, or an object {url|html_url|web_url?, number|iid?, state?: open|opened|draft|merged|closed, draft?: boolean, merged?: boolean, head_branch|head|source_branch?}",
  usage:
    "an object {input_tokens|prompt_tokens?, output_tokens|completion_tokens?, cost?: number or {amount, currency}, cost_usd|total_cost_usd?, currency?, model?, duration_ms?, duration_seconds?}",
} as const;

const changedFile = z.union([
  text,
  z.looseObject({
    path: text,
    change: text.nullish(),
    additions: finiteNumber.nullish(),
    deletions: finiteNumber.nullish(),
  }),
]);

const commandRecord = z.union([
  text,
  z.looseObject({ command: argvOrText, exit_code: exitCode.optional(), duration_ms: finiteNumber.nullish() }),
]);

const failedAttempt = z.union([
  text,
  z
    .looseObject({
      attempt: argvOrText.nullish(),
      command: argvOrText.nullish(),
      reason: text.nullish(),
      why: text.nullish(),
      error: text.nullish(),
      exit_code: exitCode.optional(),
    })
    .refine((value) => value.attempt != null || value.command != null),
]);

const risk = z.union([
  text,
  z
    .looseObject({
      severity: z.union([text, finiteNumber]).nullish(),
      detail: text.nullish(),
      description: text.nullish(),
      risk: text.nullish(),
      text: text.nullish(),
      id: z.union([text, finiteNumber]).nullish(),
      mitigation: text.nullish(),
    })
    .refine((value) => [value.detail, value.description, value.risk, value.text].some((t) => t != null)),
]);

const nextAction = z.union([
  text,
  z
    .looseObject({
      action: text.nullish(),
      description: text.nullish(),
      command: argvOrText.nullish(),
      owner: text.nullish(),
    })
    .refine((value) => value.action != null || value.description != null),
]);

const verdictPointerObject = z
  .looseObject({ verdict: text.nullish(), verification: text.nullish(), review: text.nullish() })
  .refine((value) => value.verdict != null || value.verification != null || value.review != null);
const verdictPointer = z.union([text, verdictPointerObject, z.array(z.union([text, verdictPointerObject]))]);

const timestamp = z.union([
  z.string().regex(/^\s*(\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?|\d+(\.\d+)?)\s*$/i),
  finiteNumber.nonnegative(),
]);

/** Pull request states as the code hosts and agents write them; normalise.ts maps them to four. */
export const PULL_REQUEST_STATE_WORDS = ["open", "opened", "draft", "merged", "closed"] as const;
const nonNegative = finiteNumber.refine((value) => value >= 0);

const pullRequest = z.union([
  text,
  z.number().int().positive(),
  z
    .looseObject({
      url: text.nullish(),
      html_url: text.nullish(),
      web_url: text.nullish(),
      number: z.union([z.number().int().positive(), z.string().regex(/^\s*\d+\s*$/)]).nullish(),
      iid: z.number().int().positive().nullish(),
      state: z.string().refine((value) => (PULL_REQUEST_STATE_WORDS as readonly string[]).includes(value.trim().toLowerCase())).nullish(),
      draft: z.boolean().nullish(),
      merged: z.boolean().nullish(),
      head_branch: text.nullish(),
      head: text.nullish(),
      source_branch: text.nullish(),
    })
    .refine((value) => [value.url, value.html_url, value.web_url, value.number, value.iid].some((v) => v != null)),
]);

const usage = z.looseObject({
  input_tokens: nonNegative.nullish(),
  prompt_tokens: nonNegative.nullish(),
  output_tokens: nonNegative.nullish(),
  completion_tokens: nonNegative.nullish(),
  cost: z.union([nonNegative, z.looseObject({ amount: nonNegative, currency: text.nullish() })]).nullish(),
  cost_usd: nonNegative.nullish(),
  total_cost_usd: nonNegative.nullish(),
  currency: z.string().regex(/^\s*[A-Za-z]{3}\s*$/).nullish(),
  model: text.nullish(),
  duration_ms: nonNegative.nullish(),
  duration_seconds: nonNegative.nullish(),
});

const cleanStateItem = z.union([text, z.looseObject({ check: text.nullish(), detail: text.nullish() })]);

export const packetInputSchema = z
  .looseObject({
    schema_version: accepts(z.union([z.literal(1), z.literal("1"), z.literal("baton.handoff/v1")], fail(SHAPES.schema_version)), SHAPES.schema_version),
    thread: accepts(z.string(fail(SHAPES.string)), SHAPES.string),
    session_id: accepts(z.string(fail(SHAPES.string)), SHAPES.string),
    task_id: accepts(z.union([text, finiteNumber], fail(SHAPES.string)), SHAPES.string),
    agent: accepts(
      z.union([text, z.looseObject({ name: text, kind: text.nullish(), model: text.nullish() })], fail(SHAPES.agent)),
      SHAPES.agent,
    ),
    project: accepts(z.string(fail(SHAPES.string)), SHAPES.string),
    repo: accepts(z.string(fail(SHAPES.string)), SHAPES.string),
    branch: accepts(z.string(fail(SHAPES.string)), SHAPES.string),
    topic: accepts(z.string(fail(SHAPES.string)), SHAPES.string),
    last_known_good_commit: accepts(z.string(fail(SHAPES.string)), SHAPES.string),
    status: accepts(z.string(fail(SHAPES.string)), SHAPES.string),
    created_at: accepts(z.union([timestamp], fail(SHAPES.timestamp)), SHAPES.timestamp),
    timestamp: accepts(z.union([timestamp], fail(SHAPES.timestamp)), SHAPES.timestamp),

    summary: accepts(z.string(fail(SHAPES.summary)), SHAPES.summary),
    changed_files: accepts(z.array(changedFile, fail(SHAPES.changed_files)), SHAPES.changed_files),
    commands_run: accepts(z.array(commandRecord, fail(SHAPES.commands_run)), SHAPES.commands_run),
    failed_attempts: accepts(z.array(failedAttempt, fail(SHAPES.failed_attempts)), SHAPES.failed_attempts),
    open_risks: accepts(z.array(risk, fail(SHAPES.open_risks)), SHAPES.open_risks),
    next_action: accepts(z.union([nextAction], fail(SHAPES.next_action)), SHAPES.next_action),
    verdict_pointer: accepts(z.union([verdictPointer], fail(SHAPES.verdict_pointer)), SHAPES.verdict_pointer),

    feedback_tail: accepts(
      z.array(
        z.looseObject({ command: argvOrText, exit_code: exitCode.optional() }),
        fail(SHAPES.feedback_tail),
      ),
      SHAPES.feedback_tail,
    ),
    clean_state: accepts(
      z.union([z.array(cleanStateItem), z.looseObject({ blocking: z.array(cleanStateItem) })], fail(SHAPES.clean_state)),
      SHAPES.clean_state,
    ),
    assumptions_to_validate: accepts(
      z.array(z.union([text, z.looseObject({ text, score: finiteNumber.nullish() })]), fail(SHAPES.assumptions_to_validate)),
      SHAPES.assumptions_to_validate,
    ),
    questions_for_human: accepts(
      z.array(
        z.union([
          text,
          z.looseObject({
            id: z.union([text, finiteNumber]).nullish(),
            question: text,
            context: text.nullish(),
            options: z.array(text).nullish(),
            blocking: z.boolean().nullish(),
          }),
        ]),
        fail(SHAPES.questions_for_human),
      ),
      SHAPES.questions_for_human,
    ),
    preconditions: accepts(z.array(text, fail(SHAPES.preconditions)), SHAPES.preconditions),
    verdict: accepts(
      z.looseObject(
        {
          passed: z.boolean().nullish(),
          review_total: finiteNumber.nullish(),
          review_verdict: text.nullish(),
        },
        fail(SHAPES.verdict),
      ),
      SHAPES.verdict,
    ),
    pull_request: accepts(z.union([pullRequest], fail(SHAPES.pull_request)), SHAPES.pull_request),
    usage: accepts(z.union([usage], fail(SHAPES.usage)), SHAPES.usage),
  })
  .meta({
    title: "Baton handoff packet",
    description:
      "A handoff packet as producers may send it. At least one of the seven core fields is required; unknown fields are kept.",
  });

export type PacketInput = z.infer<typeof packetInputSchema>;
