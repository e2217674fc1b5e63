import { z } from "zod";
import { humanSectionSchema } from "./section";

/** What the human endpoints answer (client-safe): the state after the write, or, on 409, the current states. */
export const humanStateDto = z.object({ thread_key: z.string(), packet_id: z.string(), human: humanSectionSchema });
export type HumanStateDto = z.infer<typeof humanStateDto>;
export const sharedAnswerResultDto = z.object({ written: z.array(humanStateDto) });
export const conflictDetailsDto = z.object({ current: z.array(humanStateDto) });
export type ConflictDetailsDto = z.infer<typeof conflictDetailsDto>;

/** What an undo of answers did to each thread: undone (its new state), or left alone because it moved on (its current state). */
export const answerUndoOutcomeDto = z.object({
  thread_key: z.string(),
  outcome: z.enum(["undone", "conflict"]),
  current: humanStateDto,
});
export type AnswerUndoOutcomeDto = z.infer<typeof answerUndoOutcomeDto>;
export const answerUndoResultDto = z.object({ results: z.array(answerUndoOutcomeDto) });
export type AnswerUndoResultDto = z.infer<typeof answerUndoResultDto>;
