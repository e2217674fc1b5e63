import "server-only";
import type BetterSqlite3 from "better-sqlite3";
import type { PrismaClient, Prisma } from "../generated/prisma/client";
import { config, isPostgresqlUrl } from "../server/config";
import { openPostgresql } from "./postgresql";
import { openSqlite } from "./sqlite";
import { connectionLostError, isBusyError, isConnectionLost } from "./errors";
import { BatonError } from "../core/errors";
import { processSlot } from "../core/singleton";
import type { SqlDriverAdapter, SqlQuery, SqlQueryable, Transaction } from "@prisma/driver-adapter-utils";

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
  /** PostgreSQL's driver adapter under Prisma (the same pool), for the hot paths' reads and write transactions. */
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
        : openSqlite(url, (connection) => (opened.connection = connection));
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
/** The advisory lock key of Baton's writers ("baton-w" in ASCII). */
export const WRITE_LOCK_KEY = 0x626174_6f6e2d77n;

/** How long one transaction may run; bulk seeding (tests, the demo) may ask for longer. */
const TRANSACTION_TIMEOUT_MS = 20_000;
/** How long a transaction may wait for a connection of its own. */
const TRANSACTION_MAX_WAIT_MS = 10_000;
const IDLE_GUARD_SLACK_MS = 1_000;

export interface TransactionOptions {
  timeoutMs?: number;
  /** False for a write that appends no ledger row and touches no row another writer reads and writes back: it skips the writers' turn. */
  ledger?: boolean;
}

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
        throw new BatonError("unavailable", "The database is busy; retry shortly.", null, 1);
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

/** PostgreSQL's driver adapter: Prisma connects it on first use, and the write paths need it from the first write on. */
async function connectedAdapter(db: PrismaClient, holder: DbHolder): Promise<SqlDriverAdapter> {
  if (!holder.adapter) await db.$connect();
  if (!holder.adapter) throw new Error("the PostgreSQL driver adapter is not connected");
  return holder.adapter;
}

/**
 * A write transaction of raw statements only, for the hot writers (ingest, session reports),
 * with inTransaction's retries, lock and timeout. This is the one place that decides its path:
 * on PostgreSQL the statements run on the driver adapter's own transaction, without Prisma's
 * interactive-transaction pipeline (docs/decisions/083-postgresql-hot-transactions-through-the-adapter.md);
 * on SQLite it is inTransaction with the executor on the adapter's one connection, as before.
 */
export async function inSqlTransaction<T>(work: (sql: SqlExecutor) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
  const db = await database();
  const holder = processDb.value;
  if (holder?.dialect !== "postgresql") return inTransaction(async (tx) => work(await sqlExecutor(tx)), options);
  const adapter = await connectedAdapter(db, holder);
  return retryingBusyOrLost((finished) => adapterTransaction(adapter, work, options, finished));
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

const rawStatement = (sql: string): SqlQuery => ({ sql, args: [], argTypes: [] });

/**
 * One attempt of inSqlTransaction on PostgreSQL: BEGIN on a connection of the adapter's pool,
 * then in one round trip the transaction's timeouts and (for a ledger write) the writers' lock;
 * `work`; COMMIT, or ROLLBACK on any error. As Prisma's transactions do, it gives up when no
 * connection came within TRANSACTION_MAX_WAIT_MS and rolls back at the timeout, after which
 * every statement fails. Unlike them, the server enforces the timeout too: no statement (the
 * lock's wait included) and no idle gap may outlast it, so a stuck transaction cannot keep the
 * writers' lock.
 */
async function adapterTransaction<T>(
  adapter: SqlDriverAdapter,
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
      await transaction.executeRaw(rawStatement(statement));
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
    // The server's idle guard a little after the timer's ROLLBACK: it is for a process that stopped talking.
    const guard = `SET LOCAL statement_timeout = ${timeoutMs}; SET LOCAL idle_in_transaction_session_timeout = ${timeoutMs + IDLE_GUARD_SLACK_MS}`;
    await transaction.executeRaw(rawStatement(options.ledger === false ? guard : `${guard}; SELECT pg_advisory_xact_lock(${WRITE_LOCK_KEY})`));
    const result = await work(postgresqlAdapterExecutor(transaction, stillOpen));
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

/**
 * Runs statements for the hot paths (ingest, token checks). On SQLite they go
 * straight to the adapter's own connection, skipping Prisma's per-query
 * overhead (about 0.2 ms a statement; docs/decisions/003-raw-sql-on-the-ingest-path.md). Writes must run
 * inside `inTransaction` (whose BEGIN they then share), `inSqlTransaction` or `inSqlStatements`.
 */
export interface SqlExecutor {
  query<Row>(sql: Prisma.Sql): Promise<Row[]>;
  /** Runs a statement; resolves to the number of rows it changed. */
  execute(sql: Prisma.Sql): Promise<number>;
}

const STATEMENT_CACHE_SIZE = 256;

// Values as the Prisma adapter writes them, so the ORM reads them back alike.
function sqliteValue(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString().replace("Z", "+00:00");
  if (typeof value === "boolean") return value ? 1 : 0;
  return value === undefined ? null : value;
}

function sqliteExecutor(connection: BetterSqlite3.Database): SqlExecutor {
  const statements = new Map<string, BetterSqlite3.Statement>();
  const prepare = (text: string) => {
    let statement = statements.get(text);
    if (!statement) {
      if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!);
      statement = connection.prepare(text);
      statements.set(text, statement);
    }
    return statement;
  };
  return {
    async query<Row>(sql: Prisma.Sql) {
      return prepare(sql.sql).all(...sql.values.map(sqliteValue)) as Row[];
    },
    async execute(sql: Prisma.Sql) {
      return prepare(sql.sql).run(...sql.values.map(sqliteValue)).changes;
    },
  };
}

/**
 * Row values as SQLite hands them out, so that code reading raw rows reads both
 * databases alike: instants as ISO text, booleans as 0/1, counts (int8) as numbers.
 */
function sqliteShaped(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString().replace("Z", "+00:00");
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "bigint") return Number(value);
  return value;
}

function postgresqlExecutor(client: Db | Tx): SqlExecutor {
  return {
    async query<Row>(sql: Prisma.Sql) {
      const rows = await client.$queryRaw<Record<string, unknown>[]>(sql);
      return rows.map((row) => {
        const shaped: Record<string, unknown> = {};
        for (const [key, value] of Object.entries(row)) shaped[key] = sqliteShaped(value);
        return shaped as Row;
      });
    },
    async execute(sql: Prisma.Sql) {
      return client.$executeRaw(sql);
    },
  };
}

/** Column types of the driver adapter's result sets (@prisma/driver-adapter-utils ColumnTypeEnum). */
const COLUMN = { Int64: 1, Numeric: 4, Boolean: 5, Date: 8, DateTime: 10, Json: 11, Bytes: 13 } as const;

/** A value as the adapter hands it out (text for instants, int8 and numeric), shaped as sqliteShaped shapes Prisma's. */
function adapterValueShaped(value: unknown, columnType: number): unknown {
  if (value === null) return null;
  switch (columnType) {
    case COLUMN.Int64:
    case COLUMN.Numeric:
      return Number(value);
    case COLUMN.Boolean:
      return value ? 1 : 0;
    case COLUMN.DateTime:
      return sqliteShaped(new Date(value as string));
    case COLUMN.Date:
      return sqliteShaped(new Date(`${value as string}T00:00:00Z`));
    case COLUMN.Json:
      return typeof value === "string" ? JSON.parse(value) : value;
    case COLUMN.Bytes:
      return Uint8Array.from(value as number[]);
    default:
      return value;
  }
}

/** Instants as the adapter writes them (UTC, no zone: the columns are zone-less timestamps). */
function adapterArg(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString().replace("T", " ").replace("Z", "");
  return value === undefined ? null : value;
}

/**
 * Statements straight through the driver adapter (outside a transaction: its pool; or one
 * transaction of it): the same type parsing as Prisma's $queryRaw without its per-statement
 * pipeline (under the issue-15 load on PostgreSQL that pipeline was about a quarter of the
 * server's CPU; docs/decisions/079-postgresql-reads-through-the-adapter.md). `beforeEach`
 * may refuse a statement (an expired transaction).
 */
function postgresqlAdapterExecutor(adapter: SqlQueryable | Transaction, beforeEach?: () => void): SqlExecutor {
  const query = (sql: Prisma.Sql) => {
    beforeEach?.();
    const args = sql.values.map(adapterArg);
    return { sql: sql.text, args, argTypes: args.map(() => ({ scalarType: "unknown" as const, arity: "scalar" as const })) };
  };
  return {
    async query<Row>(sql: Prisma.Sql) {
      const result = await adapter.queryRaw(query(sql));
      return result.rows.map((values) => {
        const shaped: Record<string, unknown> = {};
        result.columnNames.forEach((name, index) => (shaped[name] = adapterValueShaped(values[index], result.columnTypes[index]!)));
        return shaped as Row;
      });
    },
    async execute(sql: Prisma.Sql) {
      return adapter.executeRaw(query(sql));
    },
  };
}

const executors = new WeakMap<BetterSqlite3.Database, SqlExecutor>();

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
  const connection = processDb.value?.connection;
  if (!connection) throw new Error("the SQLite connection is not open");
  let executor = executors.get(connection);
  if (!executor) {
    executor = sqliteExecutor(connection);
    executors.set(connection, executor);
  }
  return executor;
}
