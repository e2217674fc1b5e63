import "server-only";
import { databaseDialect, sqlExecutor, type SqlExecutor } from "../../db/client";
import { Prisma } from "../../generated/prisma/client";
import { dialectSql } from "../../db/sql";
import { DECISION_KINDS } from "../../human/section";
import { SESSION_EVENT_KINDS } from "../threads/dto";
import {
  TIMELINE_DECISIONS_PER_LANE_MAX,
  TIMELINE_NEXT_ACTION_MAX,
  TIMELINE_SESSION_BUCKETS,
  TIMELINE_VERSIONS_PER_LANE_MAX,
  timelineDto,
  type TimelineDecisionDto,
  type TimelineDto,
  type TimelineLaneDto,
  type TimelineQuery,
  type TimelineVersionDto,
} from "./dto";
import { readFeedPage } from "./feed";
import { LEDGER_INDEXED_KEYS_MAX, firstSeqFrom } from "./ledger-window";
import { findLaneThreads, timelineSpan, type LaneThread } from "./lanes";
import { WINDOW_MS, type TimelineWindow } from "./window";

export { timelineDto, timelineQuerySchema, type TimelineDto, type TimelineQuery } from "./dto";

const iso = (value: string) => new Date(value).toISOString();
const cut = (text: string | null) =>
  text !== null && text.length > TIMELINE_NEXT_ACTION_MAX ? `${text.slice(0, TIMELINE_NEXT_ACTION_MAX - 1)}…` : text;

/**
 * Versions placed in the span by the agent's time when it is plausible (sortAt: the packet's
 * created_at unless it is in the future, lib/ingest/ordering.ts), else by received time,
 * numbered in their thread's order (sortAt, then arrival, then id), oldest first.
 */
async function readVersions(sql: SqlExecutor, threadIds: Prisma.Sql, from: Date, to: Date) {
  const rows = await sql.query<{
    id: string;
    threadId: string;
    number: number | bigint;
    receivedAt: string;
    sortAt: string | null;
    highestSeverity: string | null;
    nextAction: string | null;
  }>(Prisma.sql`
    SELECT v."id", v."threadId", n."number", v."receivedAt", v."sortAt", v."highestSeverity", substr(v."nextAction", 1, ${TIMELINE_NEXT_ACTION_MAX + 1}) AS "nextAction"
    FROM (
      SELECT "id", COALESCE("sortAt", "receivedAt") AS "placedAt", ROW_NUMBER() OVER (PARTITION BY "threadId" ORDER BY "sortAt", "receivedAt", "id") AS "number"
      FROM "PacketVersion" WHERE "threadId" IN (${threadIds})
    ) n JOIN "PacketVersion" v ON v."id" = n."id"
    WHERE n."placedAt" >= ${from} AND n."placedAt" <= ${to}
    ORDER BY n."placedAt", v."id"`);
  const byThread = new Map<string, TimelineVersionDto[]>();
  for (const row of rows) {
    const versions = byThread.get(row.threadId) ?? [];
    const receivedAt = iso(row.receivedAt);
    const agentAt = row.sortAt === null ? null : iso(row.sortAt);
    versions.push({
      id: row.id,
      number: Number(row.number),
      received_at: receivedAt,
      at: agentAt ?? receivedAt,
      at_source: agentAt !== null && agentAt !== receivedAt ? "agent" : "received",
      highest_severity: row.highestSeverity as TimelineVersionDto["highest_severity"],
      next_action: cut(row.nextAction),
    });
    byThread.set(row.threadId, versions);
  }
  return byThread;
}

/** People's decisions (approved, intervened) in the span, oldest first. */
async function readDecisions(sql: SqlExecutor, threadIds: Prisma.Sql, from: Date, to: Date) {
  const rows = await sql.query<{ threadId: string; versionId: string; action: string; at: string; username: string | null }>(Prisma.sql`
    SELECT h."threadId", h."versionId", h."action", h."at", u."username"
    FROM "HumanRevision" h LEFT JOIN "User" u ON u."id" = h."userId"
    WHERE h."threadId" IN (${threadIds}) AND h."action" IN (${Prisma.join(DECISION_KINDS)}) AND h."at" >= ${from} AND h."at" <= ${to}
    ORDER BY h."at", h."id"`);
  const byThread = new Map<string, TimelineDecisionDto[]>();
  for (const row of rows) {
    const decisions = byThread.get(row.threadId) ?? [];
    decisions.push({ packet_id: row.versionId, action: row.action as TimelineDecisionDto["action"], at: iso(row.at), by: row.username });
    byThread.set(row.threadId, decisions);
  }
  return byThread;
}

type LaneSessions = TimelineLaneDto["sessions"];
const noSessions = (): LaneSessions => ({
  session_started: { buckets: [], count: 0 },
  heartbeat: { buckets: [], count: 0 },
  session_ended: { buckets: [], count: 0 },
});

/**
 * How finely session reports are grouped in SQL: by the first characters of
 * their stored time (ISO 8601, UTC), a cheap text prefix, fine enough for the
 * window's spans (6 h: the minute; 24 h: ten minutes; 7 d and 30 d: the hour).
 */
const SESSION_TIME_PREFIX: Record<TimelineWindow, number> = { "6h": 16, "24h": 15, "7d": 13, "30d": 13 };
const completePrefix = (prefix: string) => `${prefix}${"0000-00-00T00:00:00.000Z".slice(prefix.length)}`;

/** The length of a session span of `window` (TimelineDto.session_bucket_ms). */
export const sessionBucketMs = (window: TimelineWindow) => Math.round(WINDOW_MS[window] / TIMELINE_SESSION_BUCKETS);

/**
 * Session reports (session_started, heartbeat, session_ended) in the span, as
 * the spans (1/TIMELINE_SESSION_BUCKETS of the window, counted from the epoch) holding one: a heartbeat a
 * minute over 30 days stays a few hundred numbers a lane. Grouped in SQL.
 */
async function readSessionTicks(sql: SqlExecutor, threadKeys: string[], minSeq: number, window: TimelineWindow, from: Date, to: Date) {
  // Few threads: over their (threadKey, seq) index (unary + keeps SQLite off the kind index).
  const dialect = databaseDialect();
  const kind = threadKeys.length <= LEDGER_INDEXED_KEYS_MAX ? dialectSql.unindexed(dialect, '"kind"') : Prisma.sql`"kind"`;
  const rows = await sql.query<{ threadKey: string; kind: string; prefix: string; count: number | bigint }>(Prisma.sql`
    SELECT "threadKey", "kind", substr(${dialectSql.isoText(dialect, '"at"')}, 1, ${SESSION_TIME_PREFIX[window]}) AS "prefix", COUNT(*) AS "count"
    FROM "LedgerEvent"
    WHERE "threadKey" IN (${Prisma.join(threadKeys)}) AND "seq" >= ${minSeq} AND ${kind} IN (${Prisma.join(SESSION_EVENT_KINDS)})
      AND "at" >= ${from} AND "at" <= ${to}
    GROUP BY "threadKey", "kind", "prefix"`);
  const spanMs = sessionBucketMs(window);
  const byKey = new Map<string, LaneSessions>();
  for (const row of rows) {
    const sessions = byKey.get(row.threadKey) ?? noSessions();
    const ticks = sessions[row.kind as keyof LaneSessions];
    const at = Math.max(from.getTime(), Date.parse(completePrefix(row.prefix)));
    ticks.buckets.push(Math.floor(at / spanMs));
    ticks.count += Number(row.count);
    byKey.set(row.threadKey, sessions);
  }
  for (const sessions of byKey.values()) {
    for (const ticks of Object.values(sessions)) ticks.buckets = [...new Set(ticks.buckets)].sort((a, b) => a - b);
  }
  return byKey;
}

/** The lanes of `threads` (in their order): one statement per kind of marker for all of them. */
export async function readLanes(sql: SqlExecutor, threads: LaneThread[], minSeq: number, window: TimelineWindow, from: Date, to: Date): Promise<TimelineLaneDto[]> {
  if (!threads.length) return [];
  const ids = Prisma.join(threads.map((thread) => thread.id));
  const versions = await readVersions(sql, ids, from, to);
  const decisions = await readDecisions(sql, ids, from, to);
  const sessions = await readSessionTicks(sql, threads.map((thread) => thread.key), minSeq, window, from, to);
  return threads.map((thread) => {
    const all = versions.get(thread.id) ?? [];
    return {
      key: thread.key,
      active_at: thread.updatedAt.toISOString(),
      agent: thread.agent,
      project: thread.project,
      branch: thread.branch,
      topic: thread.topic,
      versions: all.slice(-TIMELINE_VERSIONS_PER_LANE_MAX),
      versions_omitted: Math.max(0, all.length - TIMELINE_VERSIONS_PER_LANE_MAX),
      decisions: (decisions.get(thread.id) ?? []).slice(-TIMELINE_DECISIONS_PER_LANE_MAX),
      sessions: sessions.get(thread.key) ?? noSessions(),
    };
  });
}

/**
 * The timeline (docs/product.md#timeline): one lane per thread the board's filters
 * match, with its versions, people's decisions and session reports in the
 * window, and the first page of the ledger feed of those threads. One statement
 * per kind of marker for all lanes, whatever their number.
 */
export async function loadTimeline(
  query: TimelineQuery,
  options: { now?: Date; /** Only the first lanes (a first paint); the browser fetches the rest. */ lanes?: number } = {},
): Promise<TimelineDto> {
  const now = options.now ?? new Date();
  const { from, to } = timelineSpan(query.window, now);
  const found = await findLaneThreads(query, now);
  const threads = options.lanes === undefined ? found.threads : found.threads.slice(0, options.lanes);
  const sql = await sqlExecutor();
  const minSeq = found.threads.length ? await firstSeqFrom(sql, from) : 0;
  const lanes = await readLanes(sql, threads, minSeq, query.window, from, to);
  // The feed is of every lane's thread, also those a first paint leaves out.
  const feed = await readFeedPage(sql, { keys: found.threads.map((thread) => thread.key), minSeq, from, to });
  return timelineDto.parse({
    generated_at: now.toISOString(),
    window: query.window,
    from: from.toISOString(),
    to: to.toISOString(),
    session_buckets: TIMELINE_SESSION_BUCKETS,
    session_bucket_ms: sessionBucketMs(query.window),
    lanes_total: found.total,
    lanes,
    complete: threads.length === found.threads.length,
    feed,
  });
}
