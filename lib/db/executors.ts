import type BetterSqlite3 from "better-sqlite3";
import type { Prisma } from "../generated/prisma/client";
import type { SqlQueryable, Transaction } from "@prisma/driver-adapter-utils";
import type { Db, Tx } from "./client";

/**
 * The hot paths' raw statements on both databases, with values shaped alike whatever runs them
 * (lib/db/client.ts `sqlExecutor` picks one).
 */

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

export function postgresqlExecutor(client: Db | Tx): SqlExecutor {
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
export function postgresqlAdapterExecutor(adapter: SqlQueryable | Transaction, beforeEach?: () => void): SqlExecutor {
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

/** The executor of SQLite's one connection (one per connection: it keeps prepared statements). */
export function connectionExecutor(connection: BetterSqlite3.Database): SqlExecutor {
  let executor = executors.get(connection);
  if (!executor) {
    executor = sqliteExecutor(connection);
    executors.set(connection, executor);
  }
  return executor;
}

/** `executor`, but each statement first asks `beforeEach` (which refuses one on an expired transaction). */
export function guardedExecutor(executor: SqlExecutor, beforeEach: () => void): SqlExecutor {
  return {
    async query<Row>(sql: Prisma.Sql) {
      beforeEach();
      return executor.query<Row>(sql);
    },
    async execute(sql: Prisma.Sql) {
      beforeEach();
      return executor.execute(sql);
    },
  };
}
