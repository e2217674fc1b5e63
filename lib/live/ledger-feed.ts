import "server-only";
import Database from "better-sqlite3";
import { config, isPostgresqlUrl, sqliteFilePath } from "../config";
import { BatonError } from "../errors";
import { onLedger } from "../ledger/bus";
import { toLedgerEventDto, type LedgerEventDto } from "../ledger/events";
import { PostgresqlLedgerFeed, type FeedRow } from "./postgresql-feed";
import { processSlot, singleton } from "../singleton";

/**
 * The live feed of the ledger: ONE per process, shared by every open stream.
 *
 * It remembers the highest seq it has published. When this process appends
 * events (`announceLedger`, after commit) it reads the events past that seq and
 * hands them to every subscriber. Other processes (the `baton` CLI, a second
 * instance) write to the same file without telling us, so while anybody
 * listens the feed also asks `SELECT MAX(seq)` about once a second: one query
 * per process, however many clients are connected. With no subscriber left,
 * the timer, the bus listener and the connection are released.
 *
 * Why a connection of its own: Prisma's adapter has ONE connection per process
 * and serialises transactions with a mutex that plain reads do not take, so a
 * read on it outside a transaction sees the rows of whichever write transaction
 * is open at that moment, rolled back or not (lib/db.ts). A separate read-only
 * connection on the WAL database sees committed rows only, never blocks a
 * writer, and because SQLite commits one writer at a time, seqs become visible
 * in increasing order: past `MAX(seq) = N`, no event with seq <= N can appear
 * later. On PostgreSQL the same API is served by lib/live/postgresql-feed.ts
 * (LISTEN/NOTIFY across instances); call `ledgerFeedReady()` before subscribing.
 *
 * All reads are synchronous (better-sqlite3), and every step (publish, replay,
 * add a subscriber) runs without yielding to the event loop, so there is no
 * window between a subscriber's replay and its live delivery: no gaps, no
 * duplicates.
 */

/** Events read per query while catching up. */
export const FEED_READ_BATCH = 500;
/** Most events replayed to one subscriber; past that it gets a reset. */
export const MAX_REPLAY_EVENTS = 1_000;
/** How often the feed looks for other processes' writes while anybody listens. */
export const FEED_POLL_INTERVAL_MS = 1_000;

export type LedgerEventsListener = (events: LedgerEventDto[]) => void;
/**
 * The subscriber missed more than it can be told (or its seq is unknown to
 * this ledger): it must refetch everything; live delivery continues after `seq`.
 */
export type LedgerResetListener = (seq: number) => void;

interface Subscriber {
  onEvents: LedgerEventsListener;
  onReset?: LedgerResetListener;
}

/** A ledger row as both feeds read it. */
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
  subscribers: Set<Subscriber>;
  open: OpenFeed | null;
  /** The highest seq published to the subscribers (meaningful while open). */
  seq: number;
  /** A publish is scheduled for the next turn of the event loop. */
  scheduled: boolean;
  /** A publish is running (guards against a subscriber's callback re-entering it). */
  publishing: boolean;
}

// On globalThis: each route bundle may hold its own copy of this module, and
// the feed (like the bus in lib/ledger/bus.ts) must be one per process.
const feed = singleton<FeedState>("LedgerFeed", () => ({
  subscribers: new Set(),
  open: null,
  seq: 0,
  scheduled: false,
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
  feed.scheduled = false;
  if (!open) return;
  clearInterval(open.timer);
  open.stopListening();
  open.connection.close();
}

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

/** Rows as DTOs; a row that cannot be one (unknown kind, broken JSON) is logged and skipped, never retried forever. */
function toDtos(rows: EventRow[]): LedgerEventDto[] {
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

function safely(what: string, call: () => void): void {
  try {
    call();
  } catch (error) {
    console.error(`baton: live feed: ${what} failed`, error);
  }
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

/** In-process writes: one read for however many commits announce themselves in this turn. */
function schedulePublish(): void {
  if (feed.scheduled) return;
  feed.scheduled = true;
  setImmediate(() => {
    if (!feed.scheduled) return;
    feed.scheduled = false;
    safely("publishing", publish);
  });
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
function replay(open: OpenFeed, afterSeq: number, subscriber: Subscriber): void {
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
 * Subscribes to the ledger. With `afterSeq` a number, first replays (through
 * `onEvents`) the events after it, then delivers new ones as they are
 * committed, each exactly once and in seq order. When more than
 * MAX_REPLAY_EVENTS were missed, or `afterSeq` is beyond this ledger, calls
 * `onReset(seq)` instead: the caller must refetch everything and will get the
 * events after `seq`. Callers that pass a seq should pass `onReset`.
 * With `afterSeq` null, only events committed from now on are delivered.
 *
 * The replay (and a reset) happen synchronously, before this returns; right
 * after it returns, `ledgerFeedStatus().seq` is the seq the subscriber is at.
 * Throws when the database cannot be read. Returns the unsubscribe function
 * (idempotent); the last one out stops the feed.
 */
export function subscribeLedger(
  afterSeq: number | null,
  onEvents: LedgerEventsListener,
  onReset?: LedgerResetListener,
): () => void {
  if (afterSeq !== null && (!Number.isSafeInteger(afterSeq) || afterSeq < 0)) {
    throw new RangeError(`afterSeq must be a whole number, 0 or more (got ${afterSeq})`);
  }
  const subscriber: Subscriber = { onEvents, onReset };
  const onPostgresql = postgresqlFeed();
  if (onPostgresql) {
    if (!onPostgresql.running) throw new BatonError("unavailable", "Live updates are starting; retry shortly.", null, 1);
    return onPostgresql.subscribe(afterSeq, subscriber);
  }
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
  return { subscribers: feed.subscribers.size, running: feed.open !== null, seq: feed.open ? feed.seq : null };
}
