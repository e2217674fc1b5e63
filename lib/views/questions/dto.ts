import { z } from "zod";
import { isoTime } from "../../core/iso-time";

/**
 * The questions inbox's shapes (GET /api/v1/questions), client-safe: the
 * server builds them in ./inbox.ts, the browser parses refetches with them.
 */

/** One agent question waiting for a person, with what an answer must be based on. */
export const openQuestionDto = z.object({
  thread_key: z.string(),
  agent: z.string().nullable(),
  packet_id: z.string(),
  base_revision: z.number().int().nonnegative(),
  question_id: z.string(),
  context: z.string().nullable(),
  /** The agent's time for the question (its packet's created_at), else when Baton received the packet. */
  asked_at: isoTime,
  /** When Baton received the packet: shown beside asked_at when the two differ. */
  received_at: isoTime,
});

/** Identical questions (same words, case and spacing aside) from one or more threads: answered once for all. */
export const questionGroupDto = z.object({
  key: z.string(),
  question: z.string(),
  blocking: z.boolean(),
  options: z.array(z.string()),
  asked_at: isoTime,
  items: z.array(openQuestionDto),
});
export type QuestionGroupDto = z.infer<typeof questionGroupDto>;
export const inboxDto = z.object({ groups: z.array(questionGroupDto), total: z.number().int() });
export type InboxDto = z.infer<typeof inboxDto>;

/** Blocking groups first, then the oldest (the server's order, and the browser's after a delta). */
export function compareQuestionGroups(a: QuestionGroupDto, b: QuestionGroupDto): number {
  return Number(b.blocking) - Number(a.blocking) || a.asked_at.localeCompare(b.asked_at) || a.key.localeCompare(b.key);
}

/**
 * What a batch of ledger events changed in the inbox, sent over the stream as `event: delta`
 * (lib/views/questions/inbox-delta.ts, docs/decisions/064-board-deltas.md).
 */
export const inboxDeltaDto = z.object({
  view: z.literal("questions"),
  /** The last ledger seq of the batch it answers. */
  seq: z.number().int(),
  /** The threads whose open questions `groups` now are, in place of what the inbox held for them. */
  threads: z.array(z.string()),
  groups: z.array(questionGroupDto),
  /** The change could not be told as questions: refetch the inbox. */
  refetch: z.boolean(),
});
export type InboxDeltaDto = z.infer<typeof inboxDeltaDto>;
