import "server-only";
import { config, isPostgresqlUrl } from "../server/config";
import { BatonError } from "../core/errors";
import type { LedgerEventDto } from "./ledger";
import { processSlot } from "../core/singleton";
import { FEED_POLL_INTERVAL_MS, FEED_READ_BATCH, MAX_REPLAY_EVENTS, liveBatchWait, safely, toDtos } from "./feed-shared";
import { PostgresqlLedgerFeed, type FeedSubscriber } from "./postgresql-feed";
import { sqliteFeedStatus, subscribeSqliteFeed } from "./sqlite-feed";

/**
 * The live feed of the ledger, one per process and shared by every open stream: on
 * SQLite ./sqlite-feed.ts, on PostgreSQL ./postgresql-feed.ts (docs/decisions/010-live-updates.md).
 */

export type LedgerEventsListener = (events: LedgerEventDto[]) => void;
/**
 * The subscriber missed more than it can be told (or its seq is unknown to
 * this ledger): it must refetch everything; live delivery continues after `seq`.
 */
export type LedgerResetListener = (seq: number) => void;

// The PostgreSQL feed of this process, when DATABASE_URL names PostgreSQL.
const postgresql = processSlot<PostgresqlLedgerFeed>("PostgresqlFeed");
/** After its last subscriber leaves, the PostgreSQL feed keeps its connection this long. */
const POSTGRESQL_FEED_LINGER_MS = 30_000;

function postgresqlFeed(): PostgresqlLedgerFeed | null {
  const url = config().DATABASE_URL;
  if (!isPostgresqlUrl(url)) return null;
  let current = postgresql.value;
  if (current && current.options.url !== url) {
    current.stop();
    current = undefined;
  }
  if (!current) {
    const created = new PostgresqlLedgerFeed({
      url,
      readBatch: FEED_READ_BATCH,
      maxReplay: MAX_REPLAY_EVENTS,
      pollMs: FEED_POLL_INTERVAL_MS * 5,
      lingerMs: POSTGRESQL_FEED_LINGER_MS,
      toDtos,
      safely,
      liveBatchWait,
    });
    created.onIdle = () => {
      created.stop();
      if (postgresql.value === created) postgresql.value = undefined;
    };
    current = created;
    postgresql.value = created;
  }
  return current;
}

/**
 * Resolves when `subscribeLedger` can be called: at once on SQLite; on
 * PostgreSQL once this process's feed has connected and LISTENs and, with
 * `caughtUp`, has published what was committed before the call (as SQLite's
 * feed does while subscribing). Throws (503) when the database cannot be reached.
 */
export async function ledgerFeedReady(options: { caughtUp?: boolean } = {}): Promise<void> {
  const feed = postgresqlFeed();
  if (!feed) return;
  try {
    await feed.start();
    if (options.caughtUp) await feed.catchUp();
  } catch (error) {
    // A failed start is not kept: the next caller tries again.
    feed.stop();
    if (postgresql.value === feed) postgresql.value = undefined;
    console.error("baton: live feed cannot reach PostgreSQL", error);
    throw new BatonError("unavailable", "Live updates cannot reach the database right now; retry shortly.", null, 2);
  }
}

/**
 * Subscribes to the ledger: replays the events after `afterSeq` (or, past MAX_REPLAY_EVENTS
 * or beyond this ledger, calls `onReset(seq)`: refetch everything), then delivers each new
 * event once, in seq order. `afterSeq` null: from now on. The replay runs before this
 * returns. Returns the unsubscribe function (docs/decisions/010-live-updates.md).
 */
export function subscribeLedger(
  afterSeq: number | null,
  onEvents: LedgerEventsListener,
  onReset?: LedgerResetListener,
): () => void {
  if (afterSeq !== null && (!Number.isSafeInteger(afterSeq) || afterSeq < 0)) {
    throw new RangeError(`afterSeq must be a whole number, 0 or more (got ${afterSeq})`);
  }
  const subscriber: FeedSubscriber = { onEvents, onReset };
  const onPostgresql = postgresqlFeed();
  if (onPostgresql) {
    if (!onPostgresql.running) throw new BatonError("unavailable", "Live updates are starting; retry shortly.", null, 1);
    return onPostgresql.subscribe(afterSeq, subscriber);
  }
  return subscribeSqliteFeed(afterSeq, subscriber);
}

export interface LedgerFeedStatus {
  /** Subscribers of this process. */
  subscribers: number;
  /** True while the once-a-second check (and the rest of the feed) runs. */
  running: boolean;
  /** The highest seq published; null while the feed is stopped. */
  seq: number | null;
}

export function ledgerFeedStatus(): LedgerFeedStatus {
  const onPostgresql = isPostgresqlUrl(config().DATABASE_URL) ? postgresql.value : undefined;
  if (onPostgresql) {
    return { subscribers: onPostgresql.subscribers.size, running: onPostgresql.running, seq: onPostgresql.running ? onPostgresql.seq : null };
  }
  return sqliteFeedStatus();
}
