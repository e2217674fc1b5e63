import "server-only";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import type { IsolationLevel, SqlDriverAdapterFactory, SqlQuery, Transaction } from "@prisma/driver-adapter-utils";
import type BetterSqlite3 from "better-sqlite3";
import type pg from "pg";
import { PrismaClient, type Prisma } from "./generated/prisma/client";
import { config, isPostgresqlUrl, sqliteFilePath } from "./config";
import { connectionLostError, isBusyError, isConnectionLost } from "./db-errors";
import { BatonError } from "./errors";
import { processSlot } from "./singleton";

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
}

// One client per process (lib/singleton.ts): dev hot reloads and route bundles reuse it.
const processDb = processSlot<DbHolder>("Db");

/**
 * How long SQLite itself may wait for another process's lock. better-sqlite3 waits
 * on the main thread, freezing every request of the process meanwhile (5 s stalls
 * were measured), so it gets a moment only; the rest of BATON_SQLITE_BUSY_TIMEOUT_MS
 * is waited asynchronously by inTransaction.
 */
const SQLITE_LOCK_WAIT_MS = 20;

async function openSqlite(url: string, opened: DbHolder): Promise<PrismaClient> {
  const file = sqliteFilePath(url);
  mkdirSync(path.dirname(file), { recursive: true });
  const timeout = Math.min(SQLITE_LOCK_WAIT_MS, config().BATON_SQLITE_BUSY_TIMEOUT_MS);
  const factory = new PrismaBetterSQLite3({ url: `file:${file}`, timeout });
  // Keep a hand on the adapter's connection: the adapter makes exactly one per client.
  const adapter: SqlDriverAdapterFactory = {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => {
      const connected = await factory.connect();
      opened.connection = (connected as unknown as { client: BetterSqlite3.Database }).client;
      return connected;
    },
  };
  const client = new PrismaClient({ adapter });
  // Per-connection settings: the adapter keeps one connection for the process.
  await client.$queryRawUnsafe("PRAGMA journal_mode = WAL");
  await client.$executeRawUnsafe("PRAGMA synchronous = FULL");
  await client.$executeRawUnsafe("PRAGMA foreign_keys = ON");
  return client;
}

/** Connections per instance; PostgreSQL's default max_connections (100) fits several instances. */
export const POSTGRESQL_POOL_SIZE = 10;

/**
 * Prisma ends an interactive transaction by sending COMMIT or ROLLBACK and only
 * then asks the adapter to give the connection back to the pool. When that
 * statement fails (the connection was terminated: a database restart, an
 * administrator's pg_terminate_backend), it never asks, and the pool has lost
 * that connection for good: after POSTGRESQL_POOL_SIZE of them every query of
 * the instance waits forever. So a failed COMMIT or ROLLBACK gives it back here;
 * the pool drops a connection that can no longer be queried (a healthy one, whose
 * failed COMMIT ended the transaction, is reused). Giving back happens once.
 */
export function releaseOnFailedEnd(transaction: Transaction): Transaction {
  let released = false;
  const once = (end: () => Promise<void>) => async () => {
    if (released) return;
    released = true;
    await end();
  };
  const commit = once(transaction.commit.bind(transaction));
  const rollback = once(transaction.rollback.bind(transaction));
  const executeRaw = transaction.executeRaw.bind(transaction);
  return Object.assign(transaction, {
    commit,
    rollback,
    async executeRaw(query: SqlQuery): Promise<number> {
      try {
        return await executeRaw(query);
      } catch (error) {
        if (/^\s*(COMMIT|ROLLBACK)\s*$/i.test(query.sql)) await rollback().catch(() => undefined);
        throw error;
      }
    },
  });
}

/**
 * node-postgres reports a connection's failure as an 'error' event when no query
 * runs on it, and an 'error' event nobody hears is an uncaught exception. The pool
 * listens while a connection is idle, the adapter while a transaction holds it,
 * but nobody between the two: when a new connection's "ready" and its termination
 * arrive in one read (a restart cutting connections being made), the pool has just
 * handed it out and its taker listens only later. So every connection gets a
 * listener for its whole life; whoever uses it next fails, and the pool drops it.
 */
export function listenOnEveryConnection(pool: pg.Pool): void {
  pool.on("connect", (client) => client.on("error", () => undefined));
}

async function openPostgresql(url: string): Promise<PrismaClient> {
  // Loaded only on PostgreSQL: a client generated from prisma/postgresql/schema.prisma,
  // the same models as the SQLite one (lib/migrate/schema-source.ts), so the same type.
  const [{ PrismaPg }, generated] = await Promise.all([
    import("@prisma/adapter-pg"),
    import("./generated/prisma-postgresql/client"),
  ]);
  const factory = new PrismaPg({ connectionString: url, max: POSTGRESQL_POOL_SIZE });
  const adapter: SqlDriverAdapterFactory = {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => {
      const connected = await factory.connect();
      listenOnEveryConnection(connected.underlyingDriver());
      const startTransaction = connected.startTransaction.bind(connected);
      return Object.assign(connected, {
        startTransaction: async (isolationLevel?: IsolationLevel) => releaseOnFailedEnd(await startTransaction(isolationLevel)),
      });
    },
  };
  return new generated.PrismaClient({ adapter }) as unknown as PrismaClient;
}

/** The only Prisma client. */
export function database(): Promise<PrismaClient> {
  const url = config().DATABASE_URL;
  if (processDb.value?.url !== url) {
    const dialect: Dialect = isPostgresqlUrl(url) ? "postgresql" : "sqlite";
    const opened: DbHolder = { url, dialect, client: Promise.resolve(null as unknown as PrismaClient) };
    opened.client = dialect === "postgresql" ? openPostgresql(url) : openSqlite(url, opened);
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

/**
 * Runs `work` in one transaction, retrying while another process holds the
 * write lock, for up to BATON_SQLITE_BUSY_TIMEOUT_MS; past that, a 503 the
 * client may retry. The waits are timers, so the process keeps serving meanwhile.
 * Every write goes through here: the SQLite adapter has one connection per
 * process, so a write outside a transaction joins whichever transaction is
 * open, and is rolled back with it.
 *
 * On PostgreSQL every write transaction first takes one advisory lock, held to
 * its commit (docs/decisions/023): writers run one at a time, as they do on
 * SQLite, so every rule written for SQLite (read, decide, write) holds across
 * instances, and ledger seqs become visible in the order they were taken, which
 * the live feed and the webhook notifier's cursor rely on. Serialization
 * failures and deadlocks are retried like SQLite's busy errors.
 *
 * A lost PostgreSQL connection (a database restart, a terminated backend) is
 * retried too while `work` had not finished: the transaction never reached its
 * COMMIT, so nothing of it was kept, and the pool connects afresh. Lost during
 * the COMMIT, it may have committed: not run again, but answered 503 (a retried
 * packet is then a duplicate, a retried human action a conflict).
 */
const BUSY_RETRY_MAX_WAIT_MS = 250;
/** The advisory lock key of Baton's writers ("baton-w" in ASCII). */
export const WRITE_LOCK_KEY = 0x626174_6f6e2d77n;

/** How long one transaction may run; bulk seeding (tests, the demo) may ask for longer. */
const TRANSACTION_TIMEOUT_MS = 20_000;

export async function inTransaction<T>(work: (tx: Tx) => Promise<T>, options: { timeoutMs?: number } = {}): Promise<T> {
  const db = await database();
  const serialised =
    databaseDialect() === "postgresql"
      ? async (tx: Tx) => {
          await tx.$queryRaw`SELECT 1 AS "locked" FROM pg_advisory_xact_lock(${WRITE_LOCK_KEY})`;
          return work(tx);
        }
      : work;
  const deadline = Date.now() + config().BATON_SQLITE_BUSY_TIMEOUT_MS;
  for (let attempt = 1; ; attempt++) {
    let finished = false;
    try {
      return await db.$transaction(
        async (tx) => {
          const result = await serialised(tx);
          finished = true;
          return result;
        },
        { maxWait: 10_000, timeout: options.timeoutMs ?? TRANSACTION_TIMEOUT_MS },
      );
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
      const wait = Math.min(BUSY_RETRY_MAX_WAIT_MS, 10 * attempt * attempt) * (0.5 + Math.random());
      await new Promise((resolve) => setTimeout(resolve, Math.min(left, wait)));
    }
  }
}

/**
 * Runs statements for the hot paths (ingest, token checks). On SQLite they go
 * straight to the adapter's own connection, skipping Prisma's per-query
 * overhead (about 0.2 ms a statement; docs/decisions/003). Writes must run
 * inside `inTransaction`, whose BEGIN they then share.
 */
export interface SqlExecutor {
  query<Row>(sql: Prisma.Sql): Promise<Row[]>;
  execute(sql: Prisma.Sql): Promise<void>;
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
      prepare(sql.sql).run(...sql.values.map(sqliteValue));
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
      await client.$executeRaw(sql);
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
  if (processDb.value?.dialect === "postgresql") return postgresqlExecutor(tx ?? db);
  const connection = processDb.value?.connection;
  if (!connection) throw new Error("the SQLite connection is not open");
  let executor = executors.get(connection);
  if (!executor) {
    executor = sqliteExecutor(connection);
    executors.set(connection, executor);
  }
  return executor;
}
