import "server-only";
import { databaseDialect, inSqlTransaction, type SqlExecutor } from "../../db/client";
import { BatonError, type ErrorCode } from "../../core/errors";
import { singleton } from "../../core/singleton";

/**
 * Group commit of session reports that take the writers' turn
 * (docs/decisions/098-session-reports-commit-together.md): reports that arrive while one
 * transaction of them runs wait, holding no connection, and are written together in the next,
 * each report's statements one after another as if in transactions of their own. The writers'
 * lock is then taken, and COMMIT sent, once per group instead of once per report; a lone report
 * is written at once. On SQLite, which has no round trips to save, each report keeps a
 * transaction of its own.
 */

/** Reports per transaction: each is a round trip in the writers' turn, which packets wait for. */
const MAX_GROUP = 32;

/**
 * The answers a report decides from the row its statement read, having written nothing (no
 * thread with a packet; a thread of another project). Only these leave the transaction usable
 * for the rest of the group: PostgreSQL would turn a COMMIT after a failed statement into a
 * ROLLBACK of every report in it, so any other error sends the group back to one at a time.
 */
const REFUSALS: ReadonlySet<ErrorCode> = new Set(["not_found", "forbidden"]);

export interface SessionWriteRequest<T> {
  /** The report's statements; a refusal it throws (REFUSALS) has written nothing. */
  write: (sql: SqlExecutor) => Promise<T>;
  /** False when the report's loss in a database crash harms nothing (a heartbeat; TransactionOptions.flushed). */
  flushed: boolean;
}

interface Waiting {
  request: SessionWriteRequest<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { value: unknown } | { refused: BatonError };

const queue = singleton("SessionWriter", () => ({ waiting: [] as Waiting[], writing: false, groups: 0, reports: 0 }));

/** Groups committed and the reports in them since the process started, and the reports waiting now (tests). */
export function sessionWriterStats(): { groups: number; reports: number; waiting: number } {
  return { groups: queue.groups, reports: queue.reports, waiting: queue.waiting.length };
}

/** Runs the group's reports in one transaction; a refusal is that report's answer, any other error the group's. */
async function writeGroup(group: readonly Waiting[]): Promise<void> {
  const outcomes = await inSqlTransaction(
    async (sql) => {
      const done: Outcome[] = [];
      for (const { request } of group) {
        try {
          done.push({ value: await request.write(sql) });
        } catch (error) {
          if (!(error instanceof BatonError) || !REFUSALS.has(error.code)) throw error;
          done.push({ refused: error });
        }
      }
      return done;
    },
    { flushed: group.some(({ request }) => request.flushed) },
  );
  queue.groups++;
  queue.reports += group.length;
  outcomes.forEach((outcome, index) => {
    const waiting = group[index]!;
    if ("refused" in outcome) waiting.reject(outcome.refused);
    else waiting.resolve(outcome.value);
  });
}

async function drain(): Promise<void> {
  queue.writing = true;
  try {
    while (queue.waiting.length) {
      const group = queue.waiting.splice(0, MAX_GROUP);
      try {
        await writeGroup(group);
      } catch (error) {
        if (group.length === 1 || (error instanceof BatonError && error.code === "unavailable")) {
          // A busy database (503 after the whole busy timeout) would answer every report alike.
          for (const waiting of group) waiting.reject(error);
        } else {
          // Anything else is tried report by report, so one report's failure never fails its neighbours.
          for (const waiting of group) await writeGroup([waiting]).catch(waiting.reject);
        }
      }
    }
  } finally {
    queue.writing = false;
  }
}

/** Writes one session report in the writers' turn; resolves once its transaction has committed. */
export function writeSessionReport<T>(request: SessionWriteRequest<T>): Promise<T> {
  if (databaseDialect() !== "postgresql") return inSqlTransaction(request.write, { flushed: request.flushed });
  return new Promise<T>((resolve, reject) => {
    queue.waiting.push({ request, resolve: resolve as (value: unknown) => void, reject });
    if (!queue.writing) void drain();
  });
}
