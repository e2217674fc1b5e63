import "server-only";
import { config } from "../server/config";
import { toLedgerEventDto, type LedgerEventDto } from "./ledger";
import type { FeedRow } from "./postgresql-feed";

/** What the SQLite and the PostgreSQL ledger feeds share (docs/decisions/010-live-updates.md). */

/** Events read per query while catching up. */
export const FEED_READ_BATCH = 500;
/** Most events replayed to one subscriber; past that it gets a reset. */
export const MAX_REPLAY_EVENTS = 1_000;
/** How often the feed looks for other processes' writes while anybody listens. */
export const FEED_POLL_INTERVAL_MS = 1_000;
/**
 * How long to wait before the next live read, when the last one started at `lastAt`: the live
 * batch window, BATON_LIVE_BATCH_MS (docs/decisions/076-live-batch-window.md). A write after a
 * quiet spell goes out at once; under a steady flow the writes of one window travel as one
 * batch, so each view's delta is computed, and each stream written, once per window.
 */
export function liveBatchWait(lastAt: number, now = Date.now()): number {
  return Math.max(0, lastAt + config().BATON_LIVE_BATCH_MS - now);
}

/** Rows as DTOs; a row that cannot be one (unknown kind, broken JSON) is logged and skipped, never retried forever. */
export function toDtos(rows: FeedRow[]): LedgerEventDto[] {
  const dtos: LedgerEventDto[] = [];
  for (const row of rows) {
    try {
      dtos.push(toLedgerEventDto({ ...row, at: new Date(row.at) }));
    } catch (error) {
      console.error(`baton: ledger event ${row.seq} cannot be sent to live clients; skipped`, error);
    }
  }
  return dtos;
}

/** Runs a subscriber's or a timer's step; its failure is logged, never thrown into the feed. */
export function safely(what: string, call: () => void): void {
  try {
    call();
  } catch (error) {
    console.error(`baton: live feed: ${what} failed`, error);
  }
}
