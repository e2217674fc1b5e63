import { z } from "zod";
import { SEVERITIES } from "./severity";

/** The canonical form Baton stores and serves: one shape per field. */

export const canonicalRiskSchema = z.object({
  id: z.string(),
  severity: z.enum(SEVERITIES),
  severity_raw: z.string().nullable(),
  detail: z.string(),
  mitigation: z.string().optional(),
  fingerprint: z.string(),
});

export const canonicalQuestionSchema = z.object({
  id: z.string(),
  question: z.string(),
  context: z.string().optional(),
  options: z.array(z.string()).optional(),
  blocking: z.boolean(),
});

export const canonicalCommandSchema = z.object({
  command: z.string(),
  exit_code: z.number().int().nullable().optional(),
  duration_ms: z.number().optional(),
});

export const verdictPointerKindSchema = z.enum(["verification", "review", "other"]);

export const canonicalPacketSchema = z.object({
  schema_version: z.literal(1),
  thread: z.string().optional(),
  session_id: z.string().optional(),
  task_id: z.string().optional(),
  agent: z.object({ name: z.string(), kind: z.string().optional(), model: z.string().optional() }).optional(),
  project: z.string().optional(),
  branch: z.string().optional(),
  topic: z.string().optional(),
  last_known_good_commit: z.string().optional(),
  status: z.string().optional(),
  created_at: z.string().optional(),

  summary: z.string().optional(),
  changed_files: z
    .array(
      z.object({
        path: z.string(),
        change: z.string().optional(),
        additions: z.number().optional(),
        deletions: z.number().optional(),
      }),
    )
    .optional(),
  commands_run: z.array(canonicalCommandSchema).optional(),
  failed_attempts: z
    .array(
      z.object({
        attempt: z.string(),
        reason: z.string().optional(),
        exit_code: z.number().int().nullable().optional(),
      }),
    )
    .optional(),
  open_risks: z.array(canonicalRiskSchema).optional(),
  next_action: z
    .object({ text: z.string(), command: z.string().optional(), owner: z.string().optional() })
    .optional(),
  verdict_pointer: z.array(z.object({ kind: verdictPointerKindSchema, ref: z.string() })).optional(),

  feedback_tail: z.array(z.looseObject({ command: z.string(), exit_code: z.number().int().nullable().optional() })).optional(),
  clean_state: z.array(z.object({ check: z.string().optional(), detail: z.string() })).optional(),
  assumptions_to_validate: z.array(z.object({ text: z.string(), score: z.number().optional() })).optional(),
  questions_for_human: z.array(canonicalQuestionSchema).optional(),
  preconditions: z.array(z.string()).optional(),
  verdict: z
    .object({
      passed: z.boolean().optional(),
      review_total: z.number().optional(),
      review_verdict: z.string().optional(),
    })
    .optional(),
  pull_request: z
    .object({
      url: z.string().optional(),
      number: z.number().int().optional(),
      state: z.enum(["open", "draft", "merged", "closed"]).optional(),
      head_branch: z.string().optional(),
    })
    .optional(),
  usage: z
    .object({
      input_tokens: z.number().optional(),
      output_tokens: z.number().optional(),
      cost: z.object({ amount: z.number(), currency: z.string() }).optional(),
      model: z.string().optional(),
      duration_ms: z.number().optional(),
    })
    .optional(),
  /** Top-level fields the contract does not name, kept verbatim. */
  extra: z.record(z.string(), z.unknown()),
});

export type CanonicalPacket = z.infer<typeof canonicalPacketSchema>;
export type CanonicalRisk = z.infer<typeof canonicalRiskSchema>;
export type CanonicalQuestion = z.infer<typeof canonicalQuestionSchema>;
export type VerdictPointerKind = z.infer<typeof verdictPointerKindSchema>;
