import "server-only";
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
 * The shortest time between two live batches (docs/decisions/076-live-batch-window.md): a write
 * after a quiet spell goes out at once; under a steady flow the writes of this window travel as
 * one batch, so each view's delta is computed, and each stream written, once per window.
 */
export const LIVE_BATCH_MS = 100;

/** How long to wait before the next live read, when the last one started at `lastAt`. */
export function liveBatchWait(lastAt: number, now = Date.now()): number {
  return Math.max(0, lastAt + LIVE_BATCH_MS - now);
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
