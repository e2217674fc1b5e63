import "server-only";
import { databaseDialect, inTransaction, sqlExecutor, type SqlExecutor } from "../../db/client";
import { Prisma } from "../../generated/prisma/client";
import { canonicalPacketSchema } from "../../contract/canonical";
import { dialectSql, insertRows } from "../../db/sql";
import { LESSON_WINDOW_DAYS } from "./dto";
import { FAILED_ATTEMPT_COLUMNS, failedAttemptRows } from "./failed-attempts";
import { processSlot } from "../../core/singleton";

/** Versions read, and written for, per transaction: short enough not to hold up ingest. */
export const BACKFILL_BATCH = 100;
/** Its progress (the last PacketVersion rowid looked at), in the workers' cursor table: a restart resumes there. */
export const BACKFILL_CURSOR = "lessons-backfill";

const DAY_MS = 86_400_000;
const failedAttemptsSchema = canonicalPacketSchema.shape.failed_attempts;
// Stored canonical JSON has no spaces: only versions with at least one failed attempt match.
const HAS_FAILED_ATTEMPTS = '%"failed_attempts":[{%';

interface CandidateRow {
  rowid: number | bigint;
  id: string;
  threadId: string;
  receivedAt: string;
  canonicalJson: string;
}

async function readCursor(sql: SqlExecutor): Promise<number> {
  const [row] = await sql.query<{ seq: number | bigint }>(Prisma.sql`SELECT "seq" FROM "WorkerCursor" WHERE "name" = ${BACKFILL_CURSOR}`);
  return row ? Number(row.seq) : 0;
}

/** Moves the cursor forward only: two servers starting together never send it back. */
async function saveCursor(sql: SqlExecutor, rowid: number): Promise<void> {
  await sql.execute(Prisma.sql`
    INSERT INTO "WorkerCursor" ("name", "seq") VALUES (${BACKFILL_CURSOR}, ${rowid})
    ON CONFLICT ("name") DO UPDATE SET "seq" = ${dialectSql.greater(databaseDialect(), '"WorkerCursor"."seq"', 'excluded."seq"')}`);
}

/** Of `versions`, those that already have FailedAttempt rows (over the seenAt index: seenAt is the version's receivedAt). */
async function versionsWithRows(sql: SqlExecutor, versions: CandidateRow[]): Promise<Set<string>> {
  const times = versions.map((version) => version.receivedAt).sort();
  const rows = await sql.query<{ versionId: string }>(Prisma.sql`
    SELECT DISTINCT "versionId" FROM "FailedAttempt"
    WHERE "seenAt" >= ${new Date(times[0]!)} AND "seenAt" <= ${new Date(times.at(-1)!)}
      AND "versionId" IN (${Prisma.join(versions.map((version) => version.id))})`);
  return new Set(rows.map((row) => row.versionId));
}

/** One batch in one transaction: the next versions with failed attempts, their missing rows, the cursor. */
async function backfillBatch(after: number, upTo: number, since: Date, batchSize: number): Promise<{ last: number | null; versions: number; rows: number }> {
  return inTransaction(async (tx) => {
    const sql = await sqlExecutor(tx);
    const candidates = await sql.query<CandidateRow>(Prisma.sql`
      SELECT "rowid" AS "rowid", "id", "threadId", "receivedAt", "canonicalJson" FROM "PacketVersion"
      WHERE "rowid" > ${after} AND "rowid" <= ${upTo} AND "receivedAt" >= ${since} AND "canonicalJson" LIKE ${HAS_FAILED_ATTEMPTS}
      ORDER BY "rowid" LIMIT ${batchSize}`);
    const last = candidates.at(-1);
    if (!last) return { last: null, versions: 0, rows: 0 };
    const done = await versionsWithRows(sql, candidates);
    const rows: unknown[][] = [];
    let versions = 0;
    for (const candidate of candidates) {
      if (done.has(candidate.id)) continue;
      const attempts = failedAttemptsSchema.safeParse((JSON.parse(candidate.canonicalJson) as { failed_attempts?: unknown }).failed_attempts);
      if (!attempts.success || !attempts.data?.length) continue;
      versions++;
      rows.push(...failedAttemptRows(attempts.data, { versionId: candidate.id, threadId: candidate.threadId, receivedAt: new Date(candidate.receivedAt) }));
    }
    await insertRows(sql, "FailedAttempt", FAILED_ATTEMPT_COLUMNS, rows);
    await saveCursor(sql, Number(last.rowid));
    return { last: Number(last.rowid), versions, rows: rows.length };
  });
}

/**
 * Fills FailedAttempt rows for versions stored before ingest wrote them (the
 * lessons view), from each version's stored canonical form: versions received
 * in the last LESSON_WINDOW_DAYS days, in small transactions, oldest first.
 * Idempotent: a version that has rows is skipped, and the cursor remembers how
 * far it got, so later starts only look at versions stored since.
 */
export async function backfillFailedAttempts(
  options: { now?: Date; batchSize?: number } = {},
): Promise<{ versions: number; rows: number }> {
  // PostgreSQL support began with a schema that has FailedAttempt: ingest wrote every
  // row there, and SQLite's rowid (this walk's order) does not exist there.
  if (databaseDialect() === "postgresql") return { versions: 0, rows: 0 };
  const now = options.now ?? new Date();
  const batchSize = options.batchSize ?? BACKFILL_BATCH;
  const since = new Date(now.getTime() - LESSON_WINDOW_DAYS * DAY_MS);
  const sql = await sqlExecutor();
  const [top] = await sql.query<{ upTo: number | bigint | null }>(Prisma.sql`SELECT MAX("rowid") AS "upTo" FROM "PacketVersion"`);
  const upTo = Number(top?.upTo ?? 0);
  let after = await readCursor(sql);
  const total = { versions: 0, rows: 0 };
  while (after < upTo) {
    const batch = await backfillBatch(after, upTo, since, batchSize);
    total.versions += batch.versions;
    total.rows += batch.rows;
    if (batch.last === null) break;
    after = batch.last;
    // Lets requests (ingest above all) in between batches.
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (after < upTo) {
    await inTransaction(async (tx) => saveCursor(await sqlExecutor(tx), upTo));
  }
  return total;
}

const started = processSlot<Promise<void>>("LessonsBackfill");

/** Runs the backfill once per process, in the background: the server does not wait for it, and a failure is logged. */
export function startLessonsBackfill(): void {
  started.value ??= backfillFailedAttempts().then(
    ({ versions, rows }) => {
      if (rows) console.log(`baton: recorded ${rows} failed attempts of ${versions} earlier versions for the lessons view`);
    },
    (error: unknown) => console.error("baton: the lessons backfill failed; it resumes at the next start", error),
  );
}
