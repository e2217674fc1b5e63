import "server-only";
import { config } from "../../server/config";
import { databaseDialect, sqlExecutor } from "../../db/client";
import { Prisma } from "../../generated/prisma/client";
import { isNewer } from "../../ingest/ordering";
import { dialectSql, inChunks } from "../../db/sql";
import { processSlot } from "../../core/singleton";

/**
 * Whether an active packet's `last_known_good_commit` went back to an older
 * commit (docs/decisions/017-watchdog.md). Commits are opaque strings, so
 * "older" comes from the order of the versions that reported them: the active
 * commit was reported by an earlier version and a later version reported
 * another one since.
 */

/** How many versions before the active one are compared: bounds the cost whatever a thread's history. */
export const COMMIT_HISTORY_WINDOW = 20;

export interface VersionCommit {
  id: string;
  sortAt: Date;
  receivedAt: Date;
  arrivalSeq: number | null;
  commit: string | null;
}

export interface CommitRegression {
  /** The active packet's last known good commit. */
  commit: string;
  /** The newest other commit a superseded version reported after it. */
  newer: string;
  /** The superseded version that reported `newer`. */
  newerVersionId: string;
}

/** `versions` in any order; the active one among them. Null when the active commit did not go back. */
export function findCommitRegression(versions: readonly VersionCommit[], activeVersionId: string): CommitRegression | null {
  const ordered = [...versions].sort((a, b) => (isNewer(a, b) ? 1 : isNewer(b, a) ? -1 : 0));
  const activeAt = ordered.findIndex((version) => version.id === activeVersionId);
  const active = ordered[activeAt];
  if (!active?.commit) return null;
  const earlier = ordered.slice(0, activeAt);
  const firstSame = earlier.findIndex((version) => version.commit === active.commit);
  if (firstSame < 0) return null;
  const moved = earlier.slice(firstSame + 1).filter((version) => version.commit !== null && version.commit !== active.commit);
  const newest = moved.at(-1);
  return newest ? { commit: active.commit, newer: newest.commit!, newerVersionId: newest.id } : null;
}

interface CacheEntry {
  activeVersionId: string;
  regression: CommitRegression | null;
}

export interface RegressionCache {
  url: string;
  /** The ledger's seq up to which packet arrivals are reflected in `byThread`. */
  seq: number;
  byThread: Map<string, CacheEntry>;
}

// Versions never change, so a thread's answer holds until a packet arrives on it;
// the ledger's packet_received events say which threads got one (from any process).
const regressions = processSlot<RegressionCache>("CommitRegressions");

interface ActiveThread {
  id: string;
  key: string;
  activeVersionId: string;
}

interface VersionRow {
  id: string;
  sortAt: string;
  receivedAt: string;
  arrivalSeq: number | bigint | null;
  commit: unknown;
}

/**
 * The cache, brought up to the ledger's head: the head and the threads that got a packet since
 * the cache's seq in one statement (one round trip on every card's answer, not two).
 */
export async function freshRegressionCache(): Promise<RegressionCache> {
  const url = config().DATABASE_URL;
  const sql = await sqlExecutor();
  const cached = regressions.value?.url === url ? regressions.value : undefined;
  const head = Prisma.sql`SELECT MAX("seq") AS "seq" FROM "LedgerEvent"`;
  // Without a cache there is nothing to forget: the head alone, never a scan of the whole ledger.
  const rows = await sql.query<{ head: number | bigint | null; threadKey: string | null }>(
    cached
      ? Prisma.sql`SELECT h."seq" AS "head", a."threadKey" FROM (${head}) h
          LEFT JOIN (SELECT DISTINCT "threadKey" FROM "LedgerEvent" WHERE "kind" = 'packet_received' AND "seq" > ${cached.seq}) a ON TRUE`
      : Prisma.sql`SELECT h."seq" AS "head", NULL AS "threadKey" FROM (${head}) h`,
  );
  const seq = Number(rows[0]?.head ?? 0);
  // The rows forget what arrived since `cached.seq`: they fit no other cache, such as one another
  // call made meanwhile, whose entries may predate a packet this read saw (a late one).
  if (!cached || regressions.value !== cached || seq < cached.seq) {
    // Another database, the file replaced, or a cache these rows do not fit: start over.
    return (regressions.value = { url, seq, byThread: new Map() });
  }
  if (seq > cached.seq) {
    for (const row of rows) if (row.threadKey) cached.byThread.delete(row.threadKey);
    cached.seq = seq;
  }
  return cached;
}

interface ThreadVersionRow extends VersionRow {
  threadId: string;
}

/**
 * The latest COMMIT_HISTORY_WINDOW + 1 versions of each thread (a few more on a tie in
 * sortAt), in one statement per chunk of threads: each thread's window starts at its
 * (window + 1)th newest sortAt, found on the (threadId, sortAt) index, so the cost
 * does not grow with the history.
 */
async function readRecentCommits(threadIds: readonly string[]): Promise<Map<string, VersionCommit[]>> {
  const sql = await sqlExecutor();
  const rows = await inChunks(threadIds, (chunk) =>
    sql.query<ThreadVersionRow>(
      Prisma.sql`SELECT v."threadId", v."id", v."sortAt", v."receivedAt", v."arrivalSeq",
          ${dialectSql.jsonText(databaseDialect(), 'v."canonicalJson"', "last_known_good_commit")} AS "commit"
        FROM "Thread" t JOIN "PacketVersion" v ON v."threadId" = t."id" AND v."sortAt" >= COALESCE(
          (SELECT w."sortAt" FROM "PacketVersion" w WHERE w."threadId" = t."id" ORDER BY w."sortAt" DESC LIMIT 1 OFFSET ${COMMIT_HISTORY_WINDOW}),
          (SELECT MIN(w."sortAt") FROM "PacketVersion" w WHERE w."threadId" = t."id"))
        WHERE t."id" IN (${Prisma.join(chunk)})`,
    ),
  );
  const byThread = new Map<string, VersionCommit[]>();
  for (const row of rows) {
    const versions = byThread.get(row.threadId) ?? [];
    versions.push({
      id: row.id,
      sortAt: new Date(row.sortAt),
      receivedAt: new Date(row.receivedAt),
      arrivalSeq: row.arrivalSeq === null ? null : Number(row.arrivalSeq),
      commit: typeof row.commit === "string" && row.commit ? row.commit : null,
    });
    byThread.set(row.threadId, versions);
  }
  return byThread;
}

/**
 * The commit regression of each of `threads` that has one, by thread key. With `all`,
 * `threads` are every active thread and the cache forgets the others (archived), so it
 * never holds more than the active threads.
 */
export async function findCommitRegressions(
  threads: readonly ActiveThread[],
  /** freshRegressionCache(), read by the caller alongside the threads. */
  cache: RegressionCache,
  options: { all: boolean },
): Promise<Map<string, CommitRegression>> {
  const misses = threads.filter((thread) => cache.byThread.get(thread.key)?.activeVersionId !== thread.activeVersionId);
  const versions = misses.length ? await readRecentCommits(misses.map((thread) => thread.id)) : new Map<string, VersionCommit[]>();
  for (const thread of misses) {
    const regression = findCommitRegression(versions.get(thread.id) ?? [], thread.activeVersionId);
    cache.byThread.set(thread.key, { activeVersionId: thread.activeVersionId, regression });
  }
  const found = new Map<string, CommitRegression>();
  for (const thread of threads) {
    const regression = cache.byThread.get(thread.key)?.regression;
    if (regression) found.set(thread.key, regression);
  }
  if (options.all) {
    // Archived threads leave the board: their answers go too.
    const active = new Set(threads.map((thread) => thread.key));
    for (const key of cache.byThread.keys()) if (!active.has(key)) cache.byThread.delete(key);
  }
  return found;
}
