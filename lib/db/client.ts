import "server-only";
import type BetterSqlite3 from "better-sqlite3";
import type { PrismaClient, Prisma } from "../generated/prisma/client";
import { config, isPostgresqlUrl } from "../server/config";
import { openPostgresql } from "./postgresql";
import { openSqlite } from "./sqlite";
import { connectionLostError, isBusyError, isConnectionLost } from "./errors";
import { BatonError } from "../core/errors";
import { processSlot } from "../core/singleton";
import type { SqlQueryable } from "@prisma/driver-adapter-utils";

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
  /** PostgreSQL's driver adapter under Prisma (the same pool), for the hot paths' reads outside a transaction. */
  adapter?: SqlQueryable;
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

/**
 * Runs `work` in one transaction, retrying a busy database or a connection lost before
 * COMMIT until BATON_SQLITE_BUSY_TIMEOUT_MS, then 503. Every write goes through here; on
 * PostgreSQL it first takes the writers' advisory lock (docs/decisions/023-postgresql.md, 6),
 * which keeps ledger rows committing in seq order. `ledger: false` is for a write that
 * appends no ledger row and touches no row another writer reads and writes back (a
 * heartbeat's last-session columns): it does not wait for the writers' turn.
 */
export async function inTransaction<T>(work: (tx: Tx) => Promise<T>, options: { timeoutMs?: number; ledger?: boolean } = {}): Promise<T> {
  const db = await database();
  const serialised =
    databaseDialect() === "postgresql" && options.ledger !== false
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
 * overhead (about 0.2 ms a statement; docs/decisions/003-raw-sql-on-the-ingest-path.md). Writes must run
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
 * Reads outside a transaction straight through the driver adapter: the same pool and type
 * parsing as Prisma's $queryRaw without its per-statement pipeline (under the issue-15 load on
 * PostgreSQL that pipeline was about a quarter of the server's CPU; docs/decisions/079-postgresql-reads-through-the-adapter.md).
 */
function postgresqlAdapterExecutor(adapter: SqlQueryable): SqlExecutor {
  const query = (sql: Prisma.Sql) => {
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
      await adapter.executeRaw(query(sql));
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
