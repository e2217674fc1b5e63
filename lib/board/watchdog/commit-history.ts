import "server-only";
import { config } from "../../server/config";
import { databaseDialect, sqlExecutor } from "../../db/client";
import { Prisma } from "../../generated/prisma/client";
import { isNewer } from "../../ingest/ordering";
import { dialectSql } from "../../db/sql";
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

interface RegressionCache {
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

async function freshCache(): Promise<RegressionCache> {
  const url = config().DATABASE_URL;
  const sql = await sqlExecutor();
  const [head] = await sql.query<{ seq: number | null }>(Prisma.sql`SELECT MAX("seq") AS "seq" FROM "LedgerEvent"`);
  const seq = head?.seq ?? 0;
  let cache = regressions.value;
  if (!cache || cache.url !== url || seq < cache.seq) {
    // Another database (or the file was replaced): start over.
    cache = regressions.value = { url, seq, byThread: new Map() };
  } else if (seq > cache.seq) {
    const arrived = await sql.query<{ threadKey: string | null }>(
      Prisma.sql`SELECT DISTINCT "threadKey" FROM "LedgerEvent" WHERE "kind" = 'packet_received' AND "seq" > ${cache.seq}`,
    );
    for (const row of arrived) if (row.threadKey) cache.byThread.delete(row.threadKey);
    cache.seq = seq;
  }
  return cache;
}

async function readRecentCommits(threadId: string): Promise<VersionCommit[]> {
  const sql = await sqlExecutor();
  const rows = await sql.query<VersionRow>(
    Prisma.sql`SELECT "id", "sortAt", "receivedAt", "arrivalSeq", ${dialectSql.jsonText(databaseDialect(), '"canonicalJson"', "last_known_good_commit")} AS "commit"
      FROM "PacketVersion" WHERE "threadId" = ${threadId} ORDER BY "sortAt" DESC LIMIT ${COMMIT_HISTORY_WINDOW + 1}`,
  );
  return rows.map((row) => ({
    id: row.id,
    sortAt: new Date(row.sortAt),
    receivedAt: new Date(row.receivedAt),
    arrivalSeq: row.arrivalSeq === null ? null : Number(row.arrivalSeq),
    commit: typeof row.commit === "string" && row.commit ? row.commit : null,
  }));
}

/** The commit regression of each active thread that has one, by thread key. */
export async function findCommitRegressions(threads: readonly ActiveThread[]): Promise<Map<string, CommitRegression>> {
  const cache = await freshCache();
  const found = new Map<string, CommitRegression>();
  for (const thread of threads) {
    let entry = cache.byThread.get(thread.key);
    if (entry?.activeVersionId !== thread.activeVersionId) {
      const versions = await readRecentCommits(thread.id);
      entry = { activeVersionId: thread.activeVersionId, regression: findCommitRegression(versions, thread.activeVersionId) };
      cache.byThread.set(thread.key, entry);
    }
    if (entry.regression) found.set(thread.key, entry.regression);
  }
  // Archived threads leave the board: their answers go too.
  const active = new Set(threads.map((thread) => thread.key));
  for (const key of cache.byThread.keys()) if (!active.has(key)) cache.byThread.delete(key);
  return found;
}
