import "server-only";
import Database from "better-sqlite3";
import { config, sqliteFilePath } from "../server/config";
import { BatonError } from "../core/errors";
import { onLedger } from "./bus";
import type { LedgerEventDto } from "./ledger";
import { singleton } from "../core/singleton";
import { FEED_POLL_INTERVAL_MS, FEED_READ_BATCH, MAX_REPLAY_EVENTS, liveBatchWait, safely, toDtos } from "./feed-shared";
import type { FeedRow, FeedSubscriber } from "./postgresql-feed";

/** The ledger feed on SQLite: its own read-only connection, every step synchronous (docs/decisions/010-live-updates.md). */

type EventRow = FeedRow;

interface OpenFeed {
  connection: Database.Database;
  /** Events after a seq, in order. */
  after: Database.Statement<[number, number], EventRow>;
  /** Events in (from, to], in order. */
  between: Database.Statement<[number, number, number], EventRow>;
  head: Database.Statement<[], { seq: number | null }>;
  timer: NodeJS.Timeout;
  stopListening: () => void;
}

interface FeedState {
  subscribers: Set<FeedSubscriber>;
  open: OpenFeed | null;
  /** The highest seq published to the subscribers (meaningful while open). */
  seq: number;
  /** Cancels the publish scheduled for the next turn of the event loop or the end of the live batch window. */
  scheduled: (() => void) | null;
  /** When the last scheduled publish ran (the live batch window counts from it). */
  lastPublishAt: number;
  /** A publish is running (guards against a subscriber's callback re-entering it). */
  publishing: boolean;
}

// On globalThis: each route bundle may hold its own copy of this module, and
// the feed (like the bus in lib/events/bus.ts) must be one per process.
const feed = singleton<FeedState>("LedgerFeed", () => ({
  subscribers: new Set(),
  open: null,
  seq: 0,
  scheduled: null,
  lastPublishAt: 0,
  publishing: false,
}));

const EVENT_SELECT = `SELECT "seq", "at", "kind", "threadKey", "versionId", "actor", "data" FROM "LedgerEvent"`;

function start(): OpenFeed {
  const url = config().DATABASE_URL;
  if (!url.startsWith("file:")) {
    throw new BatonError("unavailable", "Live updates need a SQLite (file:) DATABASE_URL for now.");
  }
  const connection = new Database(sqliteFilePath(url), {
    readonly: true,
    fileMustExist: true,
    timeout: config().BATON_SQLITE_BUSY_TIMEOUT_MS,
  });
  try {
    const after = connection.prepare<[number, number], EventRow>(`${EVENT_SELECT} WHERE "seq" > ? ORDER BY "seq" LIMIT ?`);
    const between = connection.prepare<[number, number, number], EventRow>(
      `${EVENT_SELECT} WHERE "seq" > ? AND "seq" <= ? ORDER BY "seq" LIMIT ?`,
    );
    const head = connection.prepare<[], { seq: number | null }>(`SELECT MAX("seq") AS "seq" FROM "LedgerEvent"`);
    feed.seq = head.get()?.seq ?? 0;
    const timer = setInterval(poll, FEED_POLL_INTERVAL_MS);
    // The feed must never keep a process (a test, the CLI) alive on its own.
    timer.unref();
    const stopListening = onLedger(schedulePublish);
    return { connection, after, between, head, timer, stopListening };
  } catch (error) {
    connection.close();
    throw error;
  }
}

function stop(): void {
  const open = feed.open;
  feed.open = null;
  cancelScheduledPublish();
  if (!open) return;
  clearInterval(open.timer);
  open.stopListening();
  open.connection.close();
}

function deliver(events: LedgerEventDto[]): void {
  if (!events.length) return;
  // A copy: a callback may unsubscribe (or subscribe) while we go through them.
  for (const subscriber of [...feed.subscribers]) {
    if (feed.subscribers.has(subscriber)) safely("a subscriber", () => subscriber.onEvents(events));
  }
}

/** Reads every event past the published seq and hands it to the subscribers. */
function publish(): void {
  const open = feed.open;
  if (!open || feed.publishing) return;
  feed.publishing = true;
  try {
    for (;;) {
      const rows = open.after.all(feed.seq, FEED_READ_BATCH);
      if (!rows.length) return;
      // Advanced before delivery, so that a subscriber added from inside a
      // callback replays up to here and gets the rest live.
      feed.seq = rows[rows.length - 1]!.seq;
      deliver(toDtos(rows));
      if (rows.length < FEED_READ_BATCH || feed.open !== open) return;
    }
  } finally {
    feed.publishing = false;
  }
}

function cancelScheduledPublish(): void {
  feed.scheduled?.();
  feed.scheduled = null;
}

/**
 * In-process writes: one read for however many commits announce themselves in this turn, or
 * within the live batch window after the last read.
 */
function schedulePublish(): void {
  if (feed.scheduled) return;
  const run = () => {
    feed.scheduled = null;
    feed.lastPublishAt = Date.now();
    safely("publishing", publish);
  };
  const wait = liveBatchWait(feed.lastPublishAt);
  if (wait) {
    // The feed must never keep a process alive on its own.
    const timer = setTimeout(run, wait).unref();
    feed.scheduled = () => clearTimeout(timer);
  } else {
    const immediate = setImmediate(run);
    feed.scheduled = () => clearImmediate(immediate);
  }
}

/** The once-a-second check for writes by other processes. */
function poll(): void {
  safely("checking for new events", () => {
    const open = feed.open;
    if (!open) return;
    const head = open.head.get()?.seq ?? 0;
    if (head > feed.seq) {
      publish();
    } else if (head < feed.seq) {
      // The ledger went backwards: the database file was replaced. Everybody refetches.
      feed.seq = head;
      for (const subscriber of [...feed.subscribers]) safely("a subscriber", () => subscriber.onReset?.(head));
    }
  });
}

/** Hands `subscriber` what it missed after `afterSeq`, up to the published seq. */
function replay(open: OpenFeed, afterSeq: number, subscriber: FeedSubscriber): void {
  if (afterSeq > feed.seq) {
    // A seq this ledger has not reached: the client saw another database.
    subscriber.onReset?.(feed.seq);
    return;
  }
  if (afterSeq === feed.seq) return;
  const rows = open.between.all(afterSeq, feed.seq, MAX_REPLAY_EVENTS + 1);
  if (rows.length > MAX_REPLAY_EVENTS) {
    subscriber.onReset?.(feed.seq);
    return;
  }
  const events = toDtos(rows);
  if (events.length) subscriber.onEvents(events);
}

/**
 * Adds a subscriber: catches up, replays what it missed after `afterSeq` (or resets it),
 * all before returning (the contract of subscribeLedger in ./ledger-feed.ts).
 */
export function subscribeSqliteFeed(afterSeq: number | null, subscriber: FeedSubscriber): () => void {
  try {
    // Catch up first, so that the existing subscribers hear of the newest
    // events before this one joins, and this one replays up to them.
    if (feed.open) publish();
    // (A callback of that publish may have unsubscribed everybody, stopping the feed.)
    const open = (feed.open ??= start());
    if (afterSeq !== null) replay(open, afterSeq, subscriber);
  } catch (error) {
    if (!feed.subscribers.size) stop();
    throw error;
  }
  feed.subscribers.add(subscriber);
  return () => {
    if (!feed.subscribers.delete(subscriber)) return;
    if (!feed.subscribers.size) stop();
  };
}

export function sqliteFeedStatus(): { subscribers: number; running: boolean; seq: number | null } {
  return { subscribers: feed.subscribers.size, running: feed.open !== null, seq: feed.open ? feed.seq : null };
}
