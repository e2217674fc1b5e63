import { z } from "zod";
import { COLUMNS } from "../../lib/board/columns";
import { humanAnswerSchema, humanSectionSchema } from "../../lib/human/section";

/** The structured output of each of Baton's MCP tools (cli/mcp/tools.ts), as zod shapes. */

export const handoffOutput = {
  thread_key: z.string(),
  packet_id: z.string(),
  duplicate: z.boolean().describe("True when this exact packet was already stored: nothing changed."),
  flags: z.array(z.string()).describe("Lint flags Baton raised on the packet (docs/contract.md#lint-flags)."),
  column: z.enum(COLUMNS).nullable().describe("Where the thread now sits on the board; needs_you means a person must act."),
  reason: z.string().nullable().describe("Why it sits there."),
};

const answerOutput = z.object(humanAnswerSchema.shape);

export const askOutput = {
  status: z.enum(["answered", "not_answered_yet", "superseded"]),
  thread_key: z.string(),
  packet_id: z.string().describe("The version that carries the questions."),
  question_ids: z.array(z.string()),
  answers: z.array(answerOutput),
  pending_question_ids: z.array(z.string()),
  keep_waiting: z
    .object({ tool: z.literal("ask"), arguments: z.object({ thread: z.string(), waiting_on: z.object({ packet_id: z.string(), question_ids: z.array(z.string()) }) }) })
    .nullable()
    .describe("When not answered yet: call this to keep waiting without asking again."),
};

export const decisionOutput = {
  outcome: z.enum(["approved", "intervened", "answered", "timed_out"]),
  exit_code: z.number().int().describe("What `baton wait` would exit with: 0 approved, 10 intervened, 11 answered, 2 timed out."),
  thread_key: z.string(),
  packet_id: z.string().nullable(),
  human: humanSectionSchema.nullable().describe("The human section when a person acted: decision, answers, and instructions (questions) to deal with first when intervened."),
  message: z.string(),
};

const statusThread = z.object({
  thread_key: z.string(),
  agent: z.string().nullable(),
  project: z.string().nullable(),
  branch: z.string().nullable(),
  topic: z.string().nullable(),
  column: z.enum(COLUMNS),
  reason: z.string(),
  summary: z.string().nullable(),
  next_action: z.string().nullable(),
  unanswered_questions: z.number().int(),
  decision: z.enum(["approved", "intervened"]).nullable(),
  updated_at: z.string(),
});
export const statusOutput = {
  columns: z.array(z.enum(COLUMNS)),
  total: z.number().int().describe("Threads in those columns (all of them, also past `limit`)."),
  threads: z.array(statusThread),
};
