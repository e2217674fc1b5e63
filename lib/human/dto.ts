import { z } from "zod";
import { humanSectionSchema } from "./section";

/** What the human endpoints answer (client-safe): the state after the write, or, on 409, the current states. */
export const humanStateDto = z.object({ thread_key: z.string(), packet_id: z.string(), human: humanSectionSchema });
export type HumanStateDto = z.infer<typeof humanStateDto>;
export const sharedAnswerResultDto = z.object({ written: z.array(humanStateDto) });
export const conflictDetailsDto = z.object({ current: z.array(humanStateDto) });
export type ConflictDetailsDto = z.infer<typeof conflictDetailsDto>;
