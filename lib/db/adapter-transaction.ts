import type BetterSqlite3 from "better-sqlite3";
import type { SqlQuery, SqlDriverAdapter, Transaction } from "@prisma/driver-adapter-utils";
import { connectionExecutor, guardedExecutor, postgresqlAdapterExecutor, type SqlExecutor } from "./executors";

/**
 * One write transaction on the driver adapter's own transaction, for the hot writers
 * (lib/db/client.ts `inSqlTransaction` picks the path; decisions 083 and 086).
 */

/** The advisory lock key of Baton's writers ("baton-w" in ASCII). */
export const WRITE_LOCK_KEY = 0x626174_6f6e2d77n;

/** How long one transaction may run; bulk seeding (tests, the demo) may ask for longer. */
export const TRANSACTION_TIMEOUT_MS = 20_000;
/** How long a transaction may wait for a connection of its own. */
export const TRANSACTION_MAX_WAIT_MS = 10_000;
const IDLE_GUARD_SLACK_MS = 1_000;

export interface TransactionOptions {
  timeoutMs?: number;
  /** False for a write that appends no ledger row and touches no row another writer reads and writes back: it skips the writers' turn. */
  ledger?: boolean;
  /**
   * False for a write whose loss in a database crash harms nothing (a heartbeat: the next one
   * says the same): on PostgreSQL its COMMIT does not wait for the WAL flush, which the writers'
   * turn would otherwise wait for too (decision 092). Commit order, and so the ledger's order, is kept.
   */
  flushed?: boolean;
}

const rawStatement = (sql: string): SqlQuery => ({ sql, args: [], argTypes: [] });

/** What differs between the databases in a transaction of the driver adapter's (adapterTransaction). */
export interface AdapterTransactionPath {
  /** Runs right after BEGIN. */
  opened(transaction: Transaction, timeoutMs: number, options: TransactionOptions): Promise<void>;
  /** The work's statements; `stillOpen` throws once the transaction expired. */
  executor(transaction: Transaction, stillOpen: () => void): SqlExecutor;
  /** Sends COMMIT or ROLLBACK; the transaction's commit() or rollback() follows, whatever happened. */
  end(transaction: Transaction, statement: "COMMIT" | "ROLLBACK"): Promise<void>;
}

/**
 * PostgreSQL: a connection of the adapter's pool; in one round trip after BEGIN the
 * transaction's timeouts and (for a ledger write) the writers' lock. The server enforces the
 * timeout too: no statement (the lock's wait included) and no idle gap may outlast it, so a
 * stuck transaction cannot keep the writers' lock.
 */
export const postgresqlTransactionPath: AdapterTransactionPath = {
  async opened(transaction, timeoutMs, options) {
    // The server's idle guard a little after the timer's ROLLBACK: it is for a process that stopped talking.
    const guard = `SET LOCAL statement_timeout = ${timeoutMs}; SET LOCAL idle_in_transaction_session_timeout = ${timeoutMs + IDLE_GUARD_SLACK_MS}${options.flushed === false ? "; SET LOCAL synchronous_commit = off" : ""}`;
    await transaction.executeRaw(rawStatement(options.ledger === false ? guard : `${guard}; SELECT pg_advisory_xact_lock(${WRITE_LOCK_KEY})`));
  },
  executor: (transaction, stillOpen) => postgresqlAdapterExecutor(transaction, stillOpen),
  async end(transaction, statement) {
    await transaction.executeRaw(rawStatement(statement));
  },
};

/**
 * SQLite: the adapter's startTransaction() takes the lock every Prisma transaction on its one
 * connection takes, then sends BEGIN (deferred, as for Prisma's own); until commit() or
 * rollback() frees the lock, the work's statements run on that connection through the same
 * executor as inside inTransaction, so values read and written are shaped as before.
 */
export function sqliteTransactionPath(connection: BetterSqlite3.Database): AdapterTransactionPath {
  return {
    async opened() {},
    executor: (_transaction, stillOpen) => guardedExecutor(connectionExecutor(connection), stillOpen),
    async end(_transaction, statement) {
      try {
        // SQLite may have rolled back already after some errors (SQLITE_FULL, SQLITE_IOERR): nothing left to end.
        if (statement === "COMMIT" || connection.inTransaction) connection.exec(statement);
      } catch (error) {
        // A COMMIT that failed leaves the transaction open: end it before the lock goes to the next writer.
        if (connection.inTransaction) connection.exec("ROLLBACK");
        throw error;
      }
    },
  };
}

/**
 * One attempt of inSqlTransaction: BEGIN through the driver adapter's startTransaction(), then
 * the path's opening statements, `work`, COMMIT, or ROLLBACK on any error. As Prisma's
 * transactions do, it gives up when the transaction did not start within
 * TRANSACTION_MAX_WAIT_MS and rolls back at the timeout, after which every statement fails.
 */
export async function adapterTransaction<T>(
  adapter: SqlDriverAdapter,
  path: AdapterTransactionPath,
  work: (sql: SqlExecutor) => Promise<T>,
  options: TransactionOptions,
  finished: () => void,
): Promise<T> {
  const timeoutMs = Math.ceil(options.timeoutMs ?? TRANSACTION_TIMEOUT_MS);
  const asked = Date.now();
  const transaction = await adapter.startTransaction();
  const startedAt = Date.now();
  let open = true;
  const end = async (statement: "COMMIT" | "ROLLBACK") => {
    if (!open) return;
    open = false;
    clearTimeout(timer);
    try {
      await path.end(transaction, statement);
    } finally {
      await (statement === "COMMIT" ? transaction.commit() : transaction.rollback());
    }
  };
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    void end("ROLLBACK").catch(() => undefined);
  }, timeoutMs);
  timer.unref();
  const expiredError = () =>
    new Error(`A statement cannot be executed on an expired transaction: its timeout was ${timeoutMs} ms, and ${Date.now() - startedAt} ms passed since it started.`);
  const stillOpen = () => {
    if (expired) throw expiredError();
  };
  try {
    if (startedAt - asked > TRANSACTION_MAX_WAIT_MS) throw new Error(`Unable to start a transaction within ${TRANSACTION_MAX_WAIT_MS} ms.`);
    await path.opened(transaction, timeoutMs, options);
    const result = await work(path.executor(transaction, stillOpen));
    finished();
    stillOpen();
    await end("COMMIT");
    return result;
  } catch (error) {
    await end("ROLLBACK").catch(() => undefined);
    // Past the timeout, whatever failed (a connection the server ended meanwhile too): not retried.
    throw expired ? expiredError() : error;
  }
}
