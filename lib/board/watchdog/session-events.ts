import "server-only";
import { LEDGER_CLOCK_SLACK_MS } from "../../views/timeline/ledger-window";
import { z } from "zod";
import { loadBoard } from "../board";
import { COLUMNS, sessionAtWork } from "../columns";
import { config } from "../../server/config";
import { databaseDialect, inSqlStatements, sqlExecutor, type SqlExecutor } from "../../db/client";
import { writeSessionReport } from "./session-writer";
import { BatonError } from "../../core/errors";
import { isoTime } from "../../core/iso-time";
import { Prisma } from "../../generated/prisma/client";
import { quietHeartbeatStatement, recordedSessionStatement, type SessionThreadRow as ThreadRow } from "./session-statements";
import { announceLedger } from "../../events/bus";
import { writeLedgerEvents } from "../../events/ledger";
import { invisibleCharacter } from "../../contract/validate";
import { threadOutsideProject } from "../../contract/project-binding";
import { redactString } from "../../contract/secrets";
import { SESSION_EVENT_KINDS } from "../../views/threads/dto";
import { threadFiltersSchema } from "../../views/threads/filters";

/**
 * What an agent's session reports about itself (POST /api/v1/threads/{key}/events):
 * session_started, heartbeat, session_ended. They drive the Running column
 * (lib/board/columns.ts) and keep a thread from going stale.
 */

/** A report dated further ahead than this is refused: the agent's clock is wrong. */
export const SESSION_EVENT_MAX_FUTURE_MS = 5 * 60_000;
/**
 * A report is recorded at the time it gives; the ledger's time order may lag by at most
 * the timeline's slack (lib/views/timeline/ledger-window.ts), so older reports are refused.
 */
export const SESSION_EVENT_MAX_PAST_MS = LEDGER_CLOCK_SLACK_MS / 2;
/** At most one heartbeat event per thread in this time, unless something else happened in between (docs/decisions/017-watchdog.md). */
export const HEARTBEAT_LEDGER_INTERVAL_MS = 60_000;
export const SESSION_NOTE_MAX = 2000;
export const SESSION_ID_MAX = 200;

export const sessionEventRequestSchema = z.strictObject({
  kind: z.enum(SESSION_EVENT_KINDS, { error: `kind must be one of ${SESSION_EVENT_KINDS.join(", ")}` }),
  session_id: z
    .string({ error: "session_id must be a string" })
    .trim()
    .min(1, "session_id must not be empty")
    .max(SESSION_ID_MAX, `session_id must be at most ${SESSION_ID_MAX} characters`)
    .refine((id) => invisibleCharacter(id) === null, "session_id must not hold bidirectional controls, zero-width, invisible or control characters")
    .optional(),
  at: z.iso
    .datetime({ offset: true, error: "at must be an ISO 8601 date and time with a zone, e.g. 2026-01-31T12:00:00Z" })
    .optional(),
  note: z
    .string({ error: "note must be a string" })
    .max(SESSION_NOTE_MAX, `note must be at most ${SESSION_NOTE_MAX} characters`)
    .optional(),
});
export type SessionEventRequest = z.infer<typeof sessionEventRequestSchema>;

export const sessionEventResultDto = z.object({
  thread_key: z.string(),
  kind: z.enum(SESSION_EVENT_KINDS),
  at: isoTime,
  /** False when the thread already holds a later report: this one changed nothing. */
  applied: z.boolean(),
  /** Whether a ledger event was appended (heartbeats are recorded at most once a minute per thread). */
  recorded: z.boolean(),
  /** The thread's column now; null when it is not on the board (archived). */
  column: z.enum(COLUMNS).nullable(),
  column_reason: z.string().nullable(),
});
export type SessionEventResultDto = z.infer<typeof sessionEventResultDto>;

function reportTime(request: SessionEventRequest, now: Date): Date {
  if (!request.at) return now;
  const at = new Date(request.at);
  if (at.getTime() - now.getTime() > SESSION_EVENT_MAX_FUTURE_MS) {
    const problem = `at is more than ${SESSION_EVENT_MAX_FUTURE_MS / 60_000} minutes ahead of Baton's clock (${now.toISOString()}); send the time of the report, or leave at out`;
    throw new BatonError("invalid_request", `Bad session event: at: ${problem}.`, { fields: [{ field: "at", problem }] });
  }
  if (now.getTime() - at.getTime() > SESSION_EVENT_MAX_PAST_MS) {
    const problem = `at is more than ${SESSION_EVENT_MAX_PAST_MS / 60_000} minutes before Baton's clock (${now.toISOString()}); report sessions as they happen, or leave at out`;
    throw new BatonError("invalid_request", `Bad session event: at: ${problem}.`, { fields: [{ field: "at", problem }] });
  }
  return at;
}

/** The thread a session event is about: it must have a packet, and be of the reporting token's project. */
async function activeThread(sql: SqlExecutor, threadKey: string, project: string | null | undefined): Promise<ThreadRow & { activeVersionId: string }> {
  const [thread] = await sql.query<ThreadRow>(
    Prisma.sql`SELECT "id", "activeVersionId", "project", "archived", "activeReceivedAt", "lastSessionKind", "lastSessionAt" FROM "Thread" WHERE "key" = ${threadKey}`,
  );
  return reportableThread(thread, threadKey, project);
}

/** The rules of activeThread, on a thread row however it was read. */
function reportableThread(thread: ThreadRow | undefined, threadKey: string, project: string | null | undefined): ThreadRow & { activeVersionId: string } {
  if (!thread?.activeVersionId) {
    throw new BatonError(
      "not_found",
      `Thread "${threadKey}" was not found: session events belong to a thread that has a packet. Send the thread's first packet (POST /api/v1/packets) before its session events, and check the key.`,
    );
  }
  const refused = project ? threadOutsideProject(threadKey, thread.project, project) : null;
  if (refused) throw refused;
  return { ...thread, activeVersionId: thread.activeVersionId };
}

/** Whether the thread's latest ledger event is a heartbeat from less than a minute before `at`. */
async function heartbeatRecordedJustBefore(sql: SqlExecutor, threadKey: string, at: Date): Promise<boolean> {
  const [latest] = await sql.query<{ kind: string; at: string }>(
    Prisma.sql`SELECT "kind", "at" FROM "LedgerEvent" WHERE "threadKey" = ${threadKey} ORDER BY "seq" DESC LIMIT 1`,
  );
  return latest?.kind === "heartbeat" && new Date(latest.at).getTime() > heartbeatSince(at).getTime();
}

/** A session event's ledger data: agent text like a packet's, so secrets in it never reach the ledger (decision 020). */
function sessionEventData(request: SessionEventRequest) {
  return { session_id: request.session_id ? redactString(request.session_id) : null, note: request.note ? redactString(request.note) : null };
}

type SessionWrite = { applied: boolean; recorded: boolean; thread: ThreadRow; lastSession: SessionAtWorkInput["lastSession"] };

/**
 * Records a session report in one transaction (a quiet heartbeat: quietHeartbeat): the
 * thread's last session (only when this report is not older than the stored one) and a ledger event.
 * Answers with the thread's column, placed by the board's own rules.
 */
export async function recordSessionEvent(
  threadKey: string,
  request: SessionEventRequest,
  options: { actor: string; now?: Date; /** The reporting token's project, when it is bound to one (decision 056). */ project?: string | null },
): Promise<SessionEventResultDto> {
  const now = options.now ?? new Date();
  const at = reportTime(request, now);
  const session = { threadKey, request, at, now, actor: options.actor, project: options.project };
  const quiet = request.kind === "heartbeat" ? await quietHeartbeat(session) : null;
  // The check of quietHeartbeat is repeated in turn here (another heartbeat may have recorded since).
  const record = databaseDialect() === "postgresql" ? recordInOneStatement(session) : writeSession(session, { quiet: false });
  // A heartbeat lost in a database crash is said again by the next one: its COMMIT need not wait for the disk.
  const { applied, recorded, thread, lastSession } = quiet ?? (await writeSessionReport({ write: record, flushed: request.kind !== "heartbeat" }));
  if (recorded) announceLedger();
  const card = Number(thread.archived) ? null : (atWork(thread, lastSession, now.getTime()) ?? (await findPlacedCard(threadKey, now.getTime())));
  return sessionEventResultDto.parse({
    thread_key: threadKey,
    kind: request.kind,
    at: at.toISOString(),
    applied,
    recorded,
    column: card?.column ?? null,
    column_reason: card?.column_reason ?? null,
  });
}

interface SessionReport {
  threadKey: string;
  request: SessionEventRequest;
  at: Date;
  now: Date;
  actor: string;
  project: string | null | undefined;
}

/** The thread's checks, its last session's update and (unless quiet) the ledger event, on `sql`. */
function writeSession(report: SessionReport, { quiet }: { quiet: boolean }) {
  const { threadKey, request, at, now } = report;
  return async (sql: SqlExecutor): Promise<SessionWrite> => {
    const thread = await activeThread(sql, threadKey, report.project);
    const changed = await sql.execute(
      Prisma.sql`UPDATE "Thread" SET "lastSessionKind" = ${request.kind}, "lastSessionAt" = ${at}
        WHERE "id" = ${thread.id} AND ("lastSessionAt" IS NULL OR "lastSessionAt" <= ${at})`,
    );
    const lastSession = lastSessionAfter(changed === 1, request.kind, at, thread);
    const record = !quiet && (request.kind !== "heartbeat" || !(await heartbeatRecordedJustBefore(sql, threadKey, at)));
    if (record) {
      await writeLedgerEvents(
        sql,
        [
          {
            kind: request.kind,
            threadKey,
            versionId: thread.activeVersionId,
            actor: report.actor,
            data: sessionEventData(request),
            at,
          },
        ],
        now,
      );
    }
    return { applied: changed === 1, recorded: record, thread, lastSession };
  };
}

/**
 * Most heartbeats record no ledger event (one a minute per thread): they update the thread's
 * last session without waiting for the writers' turn, which every packet takes (issue 15:
 * 50 heartbeats/s queued behind it on PostgreSQL), and without a transaction of their own where
 * the database allows (inSqlStatements). Null when a ledger event is due: nothing was written.
 */
async function quietHeartbeat(report: SessionReport): Promise<SessionWrite | null> {
  if (databaseDialect() === "postgresql") return quietHeartbeatInOneStatement(report);
  // SQLite's statements run in this process: three cost less than one round trip's wait elsewhere.
  if (!(await heartbeatRecordedJustBefore(await sqlExecutor(), report.threadKey, report.at))) return null;
  return inSqlStatements(writeSession(report, { quiet: true }));
}

/** A quiet heartbeat on PostgreSQL in one statement (docs/decisions/088-one-statement-quiet-heartbeat.md). */
async function quietHeartbeatInOneStatement(report: SessionReport): Promise<SessionWrite | null> {
  const { threadKey, at, project } = report;
  const row = await inSqlStatements((sql) => quietHeartbeatStatement(sql, { threadKey, at, project }, heartbeatSince(at)));
  // The same refusals as writeSession's (404, another project's thread): the statement wrote nothing then.
  const thread = reportableThread(row, threadKey, project);
  if (!row!.quiet) return null;
  const applied = Number(row!.changed) === 1;
  return { applied, recorded: false, thread, lastSession: lastSessionAfter(applied, "heartbeat", at, thread) };
}

/**
 * writeSession's writes on PostgreSQL in one statement, in the writers' turn: its lock is held
 * for that statement and the COMMIT instead of four statements' round trips
 * (docs/decisions/092-one-statement-session-report.md).
 */
function recordInOneStatement(report: SessionReport) {
  const { threadKey, request, at, project } = report;
  return async (sql: SqlExecutor): Promise<SessionWrite> => {
    const event = { heartbeatSince: heartbeatSince(at), actor: report.actor, data: JSON.stringify(sessionEventData(request)) };
    const row = await recordedSessionStatement(sql, { threadKey, kind: request.kind, at, project }, event);
    const thread = reportableThread(row, threadKey, project);
    const applied = Number(row!.changed) === 1;
    return { applied, recorded: Number(row!.recorded) === 1, thread, lastSession: lastSessionAfter(applied, request.kind, at, thread) };
  };
}

const heartbeatSince = (at: Date) => new Date(at.getTime() - HEARTBEAT_LEDGER_INTERVAL_MS);

const NO_FILTERS = threadFiltersSchema.parse({});

const storedSessionKind = z.enum(SESSION_EVENT_KINDS);

/** The thread's last session after a report: the report when it was applied, else the later one it already held. */
function lastSessionAfter(applied: boolean, kind: SessionEventRequest["kind"], at: Date, thread: ThreadRow): SessionAtWorkInput["lastSession"] {
  return applied ? { kind, at: at.getTime() } : storedSession(thread.lastSessionKind, thread.lastSessionAt);
}

function storedSession(kind: string | null, at: string | null): SessionAtWorkInput["lastSession"] {
  if (!kind || at === null) return null;
  return { kind: storedSessionKind.parse(kind), at: new Date(at).getTime() };
}

type SessionAtWorkInput = Parameters<typeof sessionAtWork>[0];

/**
 * The column of a thread whose session is at work, from the thread's row alone: the board's
 * first rule (lib/board/columns.ts) precedes every flag, so most heartbeats place their card
 * without reading it (issue 15: 50 heartbeats/s each loading a card held the server at a core).
 */
function atWork(thread: ThreadRow, lastSession: SessionAtWorkInput["lastSession"], now: number): { column: "running"; column_reason: string } | null {
  if (thread.activeReceivedAt === null) return null;
  const decision = sessionAtWork({
    now,
    staleMs: config().BATON_STALE_HOURS * 3_600_000,
    activeReceivedAt: new Date(thread.activeReceivedAt).getTime(),
    lastSession,
  });
  return decision ? { column: "running", column_reason: decision.reason } : null;
}

async function findPlacedCard(threadKey: string, now: number) {
  const board = await loadBoard(NO_FILTERS, { now, keys: [threadKey] });
  for (const column of board.columns) {
    const card = column.cards.find((candidate) => candidate.key === threadKey);
    if (card) return card;
  }
  return null;
}
