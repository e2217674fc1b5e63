import "server-only";
import { database } from "../../db/client";
import { inChunks } from "../../db/sql";
import type { CardUsageDto } from "./dto";

/** The usage of these versions (those that reported one), for their cards. */
export async function loadVersionUsage(versionIds: readonly string[]): Promise<Map<string, CardUsageDto>> {
  const db = await database();
  const rows = await inChunks(versionIds, (ids) => db.packetUsage.findMany({ where: { versionId: { in: ids } } }));
  return new Map(rows.map((row) => [row.versionId, cardUsageOf(row)]));
}

/** The PacketUsage columns a card shows (also read with the card: lib/board/card-rows.ts). */
export interface UsageColumns {
  inputTokens: number | null;
  outputTokens: number | null;
  costAmount: number | null;
  costCurrency: string | null;
  model: string | null;
  durationMs: number | null;
}

/** A PacketUsage row as its card shows it. */
export function cardUsageOf(row: UsageColumns): CardUsageDto {
  return {
    input_tokens: row.inputTokens,
    output_tokens: row.outputTokens,
    cost: row.costAmount !== null && row.costCurrency !== null ? { amount: row.costAmount, currency: row.costCurrency } : null,
    model: row.model,
    duration_ms: row.durationMs,
  };
}
