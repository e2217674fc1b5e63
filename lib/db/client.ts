import "server-only";
import type BetterSqlite3 from "better-sqlite3";
import type { PrismaClient } from "../generated/prisma/client";
import { config, isPostgresqlUrl } from "../server/config";
import { openPostgresql } from "./postgresql";
import { openSqlite } from "./sqlite";
import { connectionLostError, databaseBusyError, isBusyError, isConnectionLost } from "./errors";
import { processSlot } from "../core/singleton";
import type { SqlDriverAdapter } from "@prisma/driver-adapter-utils";
import {
  adapterTransaction,
  postgresqlTransactionPath,
  sqliteTransactionPath,
  TRANSACTION_MAX_WAIT_MS,
  TRANSACTION_TIMEOUT_MS,
  WRITE_LOCK_KEY,
  type TransactionOptions,
} from "./adapter-transaction";
import { connectionExecutor, postgresqlAdapterExecutor, postgresqlExecutor, type SqlExecutor } from "./executors";

export type { SqlExecutor, TransactionOptions };
export { WRITE_LOCK_KEY };

export type Db = PrismaClient;
/** The client inside `db.$transaction(async (tx) => ...)`. */
export type Tx = Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0];

export type Dialect = "sqlite" | "postgresql";

interface DbHolder {
  url: string;
  dialect: Dialect;
  client: Promise<PrismaClient>;
  /** The SQLite connection under Prisma's adapter (the same one), for the hot paths' statements. */
  connection?: BetterSqlite3.Database;
  /** The driver adapter under Prisma (SQLite's over that connection, PostgreSQL's pool), for the hot paths' write transactions and PostgreSQL's reads. */
  adapter?: SqlDriverAdapter;
}

// One client per process (lib/core/singleton.ts): dev hot reloads and route bundles reuse it.
const processDb = processSlot<DbHolder>("Db");

/** The only Prisma client. */
export function database(): Promise<PrismaClient> {
  const url = config().DATABASE_URL;
  if (processDb.value?.url !== url) {
    const dialect: Dialect = isPostgresqlUrl(url) ? "postgresql" : "sqlite";
    const opened: DbHolder = { url, dialect, client: Promise.resolve(null as unknown as PrismaClient) };
    opened.client =
      dialect === "postgresql"
        ? openPostgresql(url, (adapter) => (opened.adapter = adapter))
        : openSqlite(url, (adapter, connection) => {
            opened.adapter = adapter;
            opened.connection = connection;
          });
    processDb.value = opened;
  }
  return processDb.value.client;
}

/** Which database the configured DATABASE_URL names. */
export function databaseDialect(): Dialect {
  return isPostgresqlUrl(config().DATABASE_URL) ? "postgresql" : "sqlite";
}

export async function closeDatabase(): Promise<void> {
  const closing = processDb.value;
  processDb.value = undefined;
  if (closing) await (await closing.client).$disconnect();
}

/** True when a write broke a UNIQUE constraint (another writer got there first). */
export function isUniqueViolation(error: unknown): boolean {
  const record = error as { code?: string; message?: string } | null;
  return record?.code === "P2002" || /Unique constraint|UniqueConstraintViolation/.test(record?.message ?? "");
}

export { isBusyError, isConnectionLost };

const BUSY_RETRY_MAX_WAIT_MS = 250;



/**
 * Runs one attempt after another until one succeeds: a busy database or a connection lost
 * before COMMIT (`finished` not yet called) is tried again until BATON_SQLITE_BUSY_TIMEOUT_MS,
 * then answered 503. A connection lost after the work finished may have committed: 503 at once.
 */
async function retryingBusyOrLost<T>(attempt: (finished: () => void) => Promise<T>): Promise<T> {
  const deadline = Date.now() + config().BATON_SQLITE_BUSY_TIMEOUT_MS;
  for (let tries = 1; ; tries++) {
    let finished = false;
    try {
      return await attempt(() => (finished = true));
    } catch (error) {
      const lost = isConnectionLost(error);
      if (lost && finished) throw connectionLostError(error);
      if (!lost && !isBusyError(error)) throw error;
      const left = deadline - Date.now();
      if (left <= 0) {
        if (lost) throw connectionLostError(error);
        throw databaseBusyError();
      }
      // Jittered, growing waits so that competing writers spread out.
      const wait = Math.min(BUSY_RETRY_MAX_WAIT_MS, 10 * tries * tries) * (0.5 + Math.random());
      await new Promise((resolve) => setTimeout(resolve, Math.min(left, wait)));
    }
  }
}

/**
 * Runs `work` in one transaction, retrying a busy database or a connection lost before
 * COMMIT until BATON_SQLITE_BUSY_TIMEOUT_MS, then 503. Every write goes through here (or
 * inSqlTransaction, inSqlStatements for the hot writers); on PostgreSQL it first takes the writers' advisory lock
 * (docs/decisions/023-postgresql.md, 6), which keeps ledger rows committing in seq order.
 * `ledger: false` (a heartbeat's last-session columns) does not wait for the writers' turn.
 */
export async function inTransaction<T>(work: (tx: Tx) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
  const db = await database();
  const serialised =
    databaseDialect() === "postgresql" && options.ledger !== false
      ? async (tx: Tx) => {
          await tx.$queryRaw`SELECT 1 AS "locked" FROM pg_advisory_xact_lock(${WRITE_LOCK_KEY})`;
          return work(tx);
        }
      : work;
  return retryingBusyOrLost((finished) =>
    db.$transaction(
      async (tx) => {
        const result = await serialised(tx);
        finished();
        return result;
      },
      { maxWait: TRANSACTION_MAX_WAIT_MS, timeout: options.timeoutMs ?? TRANSACTION_TIMEOUT_MS },
    ),
  );
}

/** The driver adapter: Prisma connects it on first use, and the write paths need it from the first write on. */
async function connectedAdapter(db: PrismaClient, holder: DbHolder): Promise<SqlDriverAdapter> {
  if (!holder.adapter) await db.$connect();
  if (!holder.adapter) throw new Error(`the ${holder.dialect} driver adapter is not connected`);
  return holder.adapter;
}

/**
 * A write transaction of raw statements only, for the hot writers (ingest, session reports),
 * with inTransaction's retries, lock and timeout. This is the one place that decides its path:
 * the statements run on the driver adapter's own transaction, without Prisma's
 * interactive-transaction pipeline: on PostgreSQL through the adapter
 * (docs/decisions/083-postgresql-hot-transactions-through-the-adapter.md), on SQLite on its one
 * connection while the adapter's transaction holds its lock
 * (docs/decisions/086-sqlite-hot-transactions-through-the-adapter.md).
 */
export async function inSqlTransaction<T>(work: (sql: SqlExecutor) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
  const db = await database();
  const holder = processDb.value!;
  const adapter = await connectedAdapter(db, holder);
  const path = holder.dialect === "postgresql" ? postgresqlTransactionPath : sqliteTransactionPath(openConnection(holder));
  return retryingBusyOrLost((finished) => adapterTransaction(adapter, path, work, options, finished));
}

/**
 * A write whose statements are each safe on their own and safe to run again (a quiet heartbeat:
 * read the thread, then a conditional UPDATE), with inTransaction's retries. On PostgreSQL each
 * statement commits alone on the adapter's pool, skipping BEGIN, the timeouts and COMMIT: at
 * READ COMMITTED a transaction would give these statements no snapshot they lack alone, and
 * they hold no lock between them. On SQLite it is inSqlTransaction without the writers' turn
 * (its one writer's transaction is how a write waits for a busy database).
 */
export async function inSqlStatements<T>(work: (sql: SqlExecutor) => Promise<T>): Promise<T> {
  const db = await database();
  const holder = processDb.value;
  if (holder?.dialect !== "postgresql") return inSqlTransaction(work, { ledger: false });
  const sql = postgresqlAdapterExecutor(await connectedAdapter(db, holder));
  return retryingBusyOrLost(async (finished) => {
    const result = await work(sql);
    finished();
    return result;
  });
}


/**
 * The executor for statements inside `tx` (or outside any transaction, for
 * reads). On SQLite the adapter has one connection, so `tx` shares it; on
 * PostgreSQL the statements run on `tx`'s own connection, so a write MUST pass it.
 */
export async function sqlExecutor(tx?: Tx): Promise<SqlExecutor> {
  const db = await database();
  if (processDb.value?.dialect === "postgresql") {
    const adapter = processDb.value.adapter;
    return !tx && adapter ? postgresqlAdapterExecutor(adapter) : postgresqlExecutor(tx ?? db);
  }
  return connectionExecutor(openConnection(processDb.value));
}

/** SQLite's one connection under the adapter. */
function openConnection(holder: DbHolder | undefined): BetterSqlite3.Database {
  if (!holder?.connection) throw new Error("the SQLite connection is not open");
  return holder.connection;
}
