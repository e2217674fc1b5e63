import { z } from "zod";
import { isoTime } from "../core/iso-time";
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
  /** The pull request, CI and review the code host reported for the thread's branch (lib/integrations). */
  work: threadWorkDto.nullable(),
  /** What the active packet reported it cost (its `usage`). */
  usage: cardUsageDto.nullable(),
});
export type BoardCardDto = z.infer<typeof boardCardDto>;

export const boardDto = z.object({
  generated_at: isoTime,
  stale_hours: z.number(),
  total: z.number().int(),
  /** False when columns carry only their first cards (the server's first paint); counts are always whole. */
  complete: z.boolean(),
  columns: z.array(
    z.object({ id: z.enum(COLUMNS), title: z.string(), count: z.number().int(), cards: z.array(boardCardDto) }),
  ),
});
export type BoardDto = z.infer<typeof boardDto>;


/**
 * What a batch of ledger events changed on a board with given filters, computed once for every
 * viewer with those filters and sent over the stream as `event: delta` (lib/board/board-delta.ts,
 * docs/decisions/064-board-deltas.md).
 */
export const boardDeltaDto = z.object({
  view: z.literal("board"),
  /** The last ledger seq of the batch it answers. */
  seq: z.number().int(),
  /** When the cards were placed (the board's `generated_at`: ages are measured from it). */
  generated_at: isoTime,
  /** Cards to put in place, whole (column and sort keys included): changed, or newly matching the filters. */
  upserts: z.array(boardCardDto),
  /** Keys of cards to take off: archived, or no longer matching the filters. */
  removes: z.array(z.string()),
  /** The change could not be told as cards (an event about no thread, a failed computation): refetch the board. */
  refetch: z.boolean(),
});
export type BoardDeltaDto = z.infer<typeof boardDeltaDto>;
