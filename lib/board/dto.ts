import { z } from "zod";
import { threadCardDto } from "../views/threads/dto";
import { verdictSummaryDto } from "../views/verdict/dto";
import { COLUMNS } from "./columns";
import { threadWorkDto } from "../integrations/dto";
import { cardUsageDto } from "../views/usage/dto";

/** The board's DTOs: safe to import from browser code (no server modules here). */

/** A card as the board shows it: the thread's card, its column and why. */
export const boardCardDto = threadCardDto.extend({
  column: z.enum(COLUMNS),
  column_reason: z.string(),
  /** The badge: the same reading of the verdict pointers as the thread page, cached per version. */
  verdict: verdictSummaryDto,
  /** The risk counts the column rule weighed, for the card's reason chips (columns.ts). */
  attention: z.object({ unacknowledged_severe: z.number().int(), regressed: z.number().int() }),
  /** The verdict is missing only because no workspace root is configured: a setup problem, told once above the board. */
  verdict_unconfigured: z.boolean(),
  /** The pull request, CI and review the code host reported for the thread's branch (lib/integrations). */
  work: threadWorkDto.nullable(),
  /** What the active packet reported it cost (its `usage`). */
  usage: cardUsageDto.nullable(),
});
export type BoardCardDto = z.infer<typeof boardCardDto>;

export const boardDto = z.object({
  generated_at: z.string(),
  stale_hours: z.number(),
  total: z.number().int(),
  /** False when columns carry only their first cards (the server's first paint); counts are always whole. */
  complete: z.boolean(),
  columns: z.array(
    z.object({ id: z.enum(COLUMNS), title: z.string(), count: z.number().int(), cards: z.array(boardCardDto) }),
  ),
});
export type BoardDto = z.infer<typeof boardDto>;
