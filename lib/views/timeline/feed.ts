import "server-only";
import { databaseDialect, sqlExecutor, type SqlExecutor } from "../../db/client";
import { Prisma } from "../../generated/prisma/client";
import { dialectSql } from "../../db/sql";
import { describeLedgerEvent } from "../../events/describe";
import type { LedgerEventDto } from "../../events/ledger";
import { TIMELINE_FEED_PAGE, timelineFeedDto, type TimelineFeedDto, type TimelineFeedEventDto, type TimelineFeedQuery } from "./dto";
import { findLaneThreads, timelineSpan } from "./lanes";
import { LEDGER_INDEXED_KEYS_MAX, firstSeqFrom } from "./ledger-window";

/** Left out of the feed: a heartbeat a minute would bury everything else (the lanes show them as ticks). */
const FEED_SKIPPED_KINDS = ["heartbeat"] as const;

/** Whether the feed shows an event of this kind. */
export const inFeed = (kind: string) => !(FEED_SKIPPED_KINDS as readonly string[]).includes(kind);

/** A ledger event as a feed row, in words (a page read here and a live delta make the same rows). */
export function feedEventOf(event: Omit<LedgerEventDto, "thread_key"> & { thread_key: string }): TimelineFeedEventDto {
  return {
    seq: event.seq,
    at: event.at,
    kind: event.kind,
    thread_key: event.thread_key,
    packet_id: event.packet_id,
    actor: event.actor,
    text: describeLedgerEvent(event),
  };
}

interface FeedRow {
  seq: number | bigint;
  at: string;
  kind: string;
  threadKey: string;
  versionId: string | null;
  actor: string;
  data: string;
}

/**
 * One page of the ledger of `keys` in [from, to], newest first, described in
 * words: events before `before` (a seq), at most TIMELINE_FEED_PAGE of them.
 */
export async function readFeedPage(
  sql: SqlExecutor,
  page: { keys: string[]; minSeq: number; from: Date; to: Date; before?: number },
): Promise<TimelineFeedDto> {
  if (!page.keys.length) return { events: [], next_cursor: null };
  const keys = Prisma.join(page.keys);
  // Few threads: their own events over the (threadKey, seq) index, sorted. Many: the ledger walked
  // back from the cursor (unary + keeps SQLite off the threadKey index), stopping at a page.
  const byThread = page.keys.length <= LEDGER_INDEXED_KEYS_MAX ? Prisma.sql`"threadKey" IN (${keys})` : Prisma.sql`${dialectSql.unindexed(databaseDialect(), '"threadKey"')} IN (${keys})`;
  const rows = await sql.query<FeedRow>(Prisma.sql`
    SELECT "seq", "at", "kind", "threadKey", "versionId", "actor", "data" FROM "LedgerEvent"
    WHERE ${byThread} AND "seq" >= ${page.minSeq} ${page.before === undefined ? Prisma.empty : Prisma.sql`AND "seq" < ${page.before}`}
      AND "kind" NOT IN (${Prisma.join(FEED_SKIPPED_KINDS)}) AND "at" >= ${page.from} AND "at" <= ${page.to}
    ORDER BY "seq" DESC
    LIMIT ${TIMELINE_FEED_PAGE + 1}`);
  const shown = rows.slice(0, TIMELINE_FEED_PAGE);
  const events = shown.map((row) =>
    feedEventOf({
      seq: Number(row.seq),
      at: new Date(row.at).toISOString(),
      kind: row.kind as LedgerEventDto["kind"],
      thread_key: row.threadKey,
      packet_id: row.versionId,
      actor: row.actor,
      data: JSON.parse(row.data) as Record<string, unknown>,
    }),
  );
  const last = shown.at(-1);
  return { events, next_cursor: rows.length > TIMELINE_FEED_PAGE && last ? Number(last.seq) : null };
}

/** GET /api/v1/timeline/feed: a later page of the feed of the timeline's threads. */
export async function listTimelineFeed(query: TimelineFeedQuery, now: Date = new Date()): Promise<TimelineFeedDto> {
  const { from, to } = timelineSpan(query.window, now);
  const { threads } = await findLaneThreads(query, now);
  const sql = await sqlExecutor();
  const minSeq = threads.length ? await firstSeqFrom(sql, from) : 0;
  return timelineFeedDto.parse(await readFeedPage(sql, { keys: threads.map((thread) => thread.key), minSeq, from, to, before: query.before }));
}

/** Of `keys`, the threads with feed rows in [from, to] before seq `before`: one indexed probe each (a batch's threads, never the timeline's). */
export async function threadsWithFeedBefore(sql: SqlExecutor, keys: readonly string[], window: { minSeq: number; before: number; from: Date; to: Date }): Promise<string[]> {
  const found = await Promise.all(
    keys.map(async (key) => {
      const rows = await sql.query<{ seq: number | bigint }>(Prisma.sql`
        SELECT "seq" FROM "LedgerEvent"
        WHERE "threadKey" = ${key} AND "seq" >= ${window.minSeq} AND "seq" < ${window.before}
          AND "kind" NOT IN (${Prisma.join(FEED_SKIPPED_KINDS)}) AND "at" >= ${window.from} AND "at" <= ${window.to}
        ORDER BY "seq" DESC LIMIT 1`);
      return rows.length ? [key] : [];
    }),
  );
  return found.flat();
}
