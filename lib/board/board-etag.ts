import "server-only";
import { sqlExecutor } from "../db/client";
import { Prisma } from "../generated/prisma/client";
import { stateEtag } from "../http/etag";
import type { Reader } from "../auth/read-access";
import type { ThreadFilters } from "../views/threads/filters";

/**
 * What the board shows changes with the ledger (packets, people's actions, triage,
 * recorded session events, findings) and with the clock (stale, snoozes ending, a
 * session going quiet, verdict reports re-read). The clock is taken in steps of this
 * size: a refetch within one step and without a ledger event gets 304.
 */
export const BOARD_ETAG_CLOCK_STEP_MS = 30_000;

/** The board's ETag for these filters and this reader: one indexed read, no board. */
export async function boardEtag(filters: ThreadFilters, reader: Reader | undefined, now = Date.now()): Promise<string> {
  const sql = await sqlExecutor();
  const [head] = await sql.query<{ seq: number | bigint | null }>(Prisma.sql`SELECT MAX("seq") AS "seq" FROM "LedgerEvent"`);
  // The viewer's role does not change the board today; it is in the tag so that a board shaped by role never shares one.
  const viewer = reader?.kind === "person" ? reader.person.role : "token";
  return stateEtag(["board", Number(head?.seq ?? 0), Math.floor(now / BOARD_ETAG_CLOCK_STEP_MS), viewer, filters]);
}
