import "server-only";
import { Prisma, type Thread } from "../../generated/prisma/client";
import type { ExecutorRow } from "../../db/sql";
import type { SqlExecutor } from "../../db/client";

/**
 * A session report's writes on PostgreSQL, each in one data-modifying statement (issue 15:
 * every round trip of a writer in the writers' turn keeps the others waiting;
 * docs/decisions/088-one-statement-quiet-heartbeat.md and 092-one-statement-session-report.md).
 * Each updates the thread's last session only when the rules of session-events.ts allow (the
 * thread has a packet, is of the bound token's project, the report is not older than the
 * stored one) and returns the thread's row as it was before, which session-events.ts judges
 * with the same function as on SQLite. SQLite has no data-modifying CTEs: it runs
 * session-events.ts's statements one by one.
 */

export type SessionThreadRow = ExecutorRow<Pick<Thread, "id" | "activeVersionId" | "project" | "archived" | "activeReceivedAt" | "lastSessionKind" | "lastSessionAt">>;

const THREAD_COLUMNS = Prisma.sql`"id", "activeVersionId", "project", "archived", "activeReceivedAt", "lastSessionKind", "lastSessionAt"`;

/** The thread may take the report: it has a packet, and is of the token's project (threadOutsideProject's equality). */
const reportable = (project: string | null | undefined) =>
  Prisma.sql`"activeVersionId" IS NOT NULL ${project ? Prisma.sql`AND "project" = ${project}` : Prisma.empty}`;

/** The thread's latest ledger event, when it is a heartbeat after `since`. */
const recentHeartbeat = (threadKey: string, since: Date) =>
  Prisma.sql`SELECT 1 FROM (SELECT "kind", "at" FROM "LedgerEvent" WHERE "threadKey" = ${threadKey} ORDER BY "seq" DESC LIMIT 1) AS "latest"
    WHERE "kind" = 'heartbeat' AND "at" > ${since}`;

export interface SessionStatementInput {
  threadKey: string;
  kind: string;
  at: Date;
  project: string | null | undefined;
}

/**
 * A heartbeat that records no ledger event: it writes only when the thread's latest ledger
 * event is a heartbeat after `since`, and says so (`quiet`). Outside a transaction.
 */
export async function quietHeartbeatStatement(
  sql: SqlExecutor,
  { threadKey, at, project }: Omit<SessionStatementInput, "kind">,
  since: Date,
): Promise<(SessionThreadRow & { quiet: boolean; changed: number }) | undefined> {
  const [row] = await sql.query<SessionThreadRow & { quiet: boolean; changed: number }>(
    Prisma.sql`WITH "quiet" AS (${recentHeartbeat(threadKey, since)}),
      "updated" AS (
        UPDATE "Thread" SET "lastSessionKind" = 'heartbeat', "lastSessionAt" = ${at}
        WHERE "key" = ${threadKey} AND ${reportable(project)} AND EXISTS (SELECT 1 FROM "quiet")
          AND ("lastSessionAt" IS NULL OR "lastSessionAt" <= ${at})
        RETURNING 1
      )
      SELECT ${THREAD_COLUMNS}, EXISTS (SELECT 1 FROM "quiet") AS "quiet", (SELECT count(*) FROM "updated") AS "changed"
      FROM "Thread" WHERE "key" = ${threadKey}`,
  );
  return row;
}

/**
 * A report in the writers' turn (inside the caller's transaction, after the lock): the last
 * session's update and its ledger event, unless it is a heartbeat and the thread's latest
 * ledger event is a heartbeat after `heartbeatSince` (then only the update).
 */
export async function recordedSessionStatement(
  sql: SqlExecutor,
  { threadKey, kind, at, project }: SessionStatementInput,
  event: { heartbeatSince: Date; actor: string; data: string },
): Promise<(SessionThreadRow & { changed: number; recorded: number }) | undefined> {
  const due = kind === "heartbeat" ? Prisma.sql`AND NOT EXISTS (${recentHeartbeat(threadKey, event.heartbeatSince)})` : Prisma.empty;
  const [row] = await sql.query<SessionThreadRow & { changed: number; recorded: number }>(
    Prisma.sql`WITH "before" AS (SELECT ${THREAD_COLUMNS} FROM "Thread" WHERE "key" = ${threadKey}),
      "updated" AS (
        UPDATE "Thread" SET "lastSessionKind" = ${kind}, "lastSessionAt" = ${at}
        WHERE "key" = ${threadKey} AND ${reportable(project)} AND ("lastSessionAt" IS NULL OR "lastSessionAt" <= ${at})
        RETURNING 1
      ),
      "recorded" AS (
        INSERT INTO "LedgerEvent" ("at", "kind", "threadKey", "versionId", "actor", "data")
        SELECT CAST(${at} AS timestamp(3)), CAST(${kind} AS text), CAST(${threadKey} AS text), "activeVersionId", CAST(${event.actor} AS text), CAST(${event.data} AS text)
        FROM "before" WHERE ${reportable(project)} ${due}
        RETURNING 1
      )
      SELECT ${THREAD_COLUMNS}, (SELECT count(*) FROM "updated") AS "changed", (SELECT count(*) FROM "recorded") AS "recorded"
      FROM "before"`,
  );
  return row;
}
