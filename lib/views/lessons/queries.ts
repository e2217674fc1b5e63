import "server-only";
import { databaseDialect, sqlExecutor } from "../../db/client";
import { Prisma } from "../../generated/prisma/client";
import { dialectSql } from "../../db/sql";
import {
  LESSON_THREADS_MAX,
  LESSON_WINDOW_DAYS,
  LESSONS_MAX,
  lessonsDto,
  type LessonDto,
  type LessonsDto,
  type LessonsQuery,
  type LessonThreadDto,
} from "./dto";

export { lessonsDto, lessonsQuerySchema, type LessonDto, type LessonsDto, type LessonsQuery } from "./dto";

const DAY_MS = 86_400_000;

/** Dates come back from SQLite as the text the adapter wrote. */
const iso = (value: string | Date) => (value instanceof Date ? value : new Date(value)).toISOString();

/** A LIKE pattern matching `text` anywhere, its wildcards taken literally (ESCAPE '\'). */
export const containsPattern = (text: string) => `%${text.replace(/[\\%_]/g, "\\$&")}%`;

/** Fingerprints with a row in the window whose words, or whose thread, match the free text. */
function textFilter(text: string | undefined, since: Date, until: Date): Prisma.Sql {
  if (!text) return Prisma.empty;
  const like = containsPattern(text);
  const fields = ['f."attempt"', 'f."reason"', 't."key"', 't."agent"', 't."project"', 't."branch"', 't."topic"'];
  const matches = Prisma.join(fields.map((field) => Prisma.sql`${Prisma.raw(field)} ${dialectSql.like(databaseDialect())} ${like} ESCAPE '\\'`), " OR ");
  return Prisma.sql`AND "fingerprint" IN (
    SELECT f."fingerprint" FROM "FailedAttempt" f JOIN "Thread" t ON t."id" = f."threadId"
    WHERE f."seenAt" >= ${since} AND f."seenAt" <= ${until} AND (${matches}))`;
}

interface GroupRow {
  fingerprint: string;
  occurrences: number | bigint;
  firstSeen: string;
  lastSeen: string;
}

/**
 * Recurring failures (docs/product.md#recurring-failures): failed attempts seen in
 * the last LESSON_WINDOW_DAYS days, grouped by fingerprint, that more than one
 * version carries; the most recently seen first. Three statements whatever the
 * number of lessons: the groups, their latest wording, their threads.
 */
export async function listLessons(query: LessonsQuery = {}, now: Date = new Date()): Promise<LessonsDto> {
  const sql = await sqlExecutor();
  const since = new Date(now.getTime() - LESSON_WINDOW_DAYS * DAY_MS);
  const inWindow = Prisma.sql`"seenAt" >= ${since} AND "seenAt" <= ${now}`;
  const groups = await sql.query<GroupRow>(Prisma.sql`
    SELECT "fingerprint", COUNT(DISTINCT "versionId") AS "occurrences", MIN("seenAt") AS "firstSeen", MAX("seenAt") AS "lastSeen"
    FROM "FailedAttempt"
    WHERE ${inWindow} ${textFilter(query.q, since, now)}
    GROUP BY "fingerprint"
    HAVING COUNT(DISTINCT "versionId") >= 2
    ORDER BY "lastSeen" DESC, "fingerprint"
    LIMIT ${LESSONS_MAX + 1}`);
  const page = groups.slice(0, LESSONS_MAX);
  const lessons = page.length ? await describeGroups(page, inWindow) : [];
  return lessonsDto.parse({
    generated_at: now.toISOString(),
    window_days: LESSON_WINDOW_DAYS,
    lessons,
    truncated: groups.length > LESSONS_MAX,
  });
}

async function describeGroups(groups: GroupRow[], inWindow: Prisma.Sql): Promise<LessonDto[]> {
  const sql = await sqlExecutor();
  const fingerprints = Prisma.join(groups.map((group) => group.fingerprint));
  const [wordings, threadRows] = await Promise.all([
    sql.query<{ fingerprint: string; attempt: string; reason: string | null; exitCode: number | bigint | null }>(Prisma.sql`
      SELECT "fingerprint", "attempt", "reason", "exitCode" FROM (
        SELECT "fingerprint", "attempt", "reason", "exitCode",
          ROW_NUMBER() OVER (PARTITION BY "fingerprint" ORDER BY "seenAt" DESC, "id" DESC) AS "rank"
        FROM "FailedAttempt" WHERE "fingerprint" IN (${fingerprints}) AND ${inWindow}
      ) AS "ranked" WHERE "rank" = 1`),
    sql.query<{ fingerprint: string; key: string; agent: string | null; lastSeen: string }>(Prisma.sql`
      SELECT f."fingerprint" AS "fingerprint", t."key" AS "key", t."agent" AS "agent", MAX(f."seenAt") AS "lastSeen"
      FROM "FailedAttempt" f JOIN "Thread" t ON t."id" = f."threadId"
      WHERE f."fingerprint" IN (${fingerprints}) AND ${inWindow}
      GROUP BY f."fingerprint", t."id"`),
  ]);
  const wordingOf = new Map(wordings.map((row) => [row.fingerprint, row]));
  const threadsOf = new Map<string, LessonThreadDto[]>();
  for (const row of threadRows) {
    const threads = threadsOf.get(row.fingerprint) ?? [];
    threads.push({ key: row.key, agent: row.agent, last_seen: iso(row.lastSeen) });
    threadsOf.set(row.fingerprint, threads);
  }
  return groups.map((group) => {
    const wording = wordingOf.get(group.fingerprint)!;
    const threads = (threadsOf.get(group.fingerprint) ?? []).sort(
      (a, b) => b.last_seen.localeCompare(a.last_seen) || a.key.localeCompare(b.key),
    );
    return {
      fingerprint: group.fingerprint,
      attempt: wording.attempt,
      reason: wording.reason,
      exit_code: wording.exitCode === null ? null : Number(wording.exitCode),
      occurrences: Number(group.occurrences),
      thread_count: threads.length,
      threads: threads.slice(0, LESSON_THREADS_MAX),
      first_seen: iso(group.firstSeen),
      last_seen: iso(group.lastSeen),
    };
  });
}
