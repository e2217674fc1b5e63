import "server-only";
import { databaseDialect, type Dialect, type SqlExecutor } from "./client";
import { Prisma } from "../generated/prisma/client";

/** A value as SqlExecutor.query hands it out on either database (lib/db/client.ts): instants as ISO text, booleans as 0/1, int8 as numbers. */
type ExecutorValue<Value> = Value extends Date ? string : Value extends boolean | bigint ? number : Value;
/** A row of these columns (a Prisma model's, or a pick of them) as SqlExecutor.query hands it out. */
export type ExecutorRow<Columns> = { [Column in keyof Columns]: ExecutorValue<Columns[Column]> };
/** An instant of an ExecutorRow (ISO text) as a Date. */
export const instant = (text: string) => new Date(text);
export const optionalInstant = (text: string | null) => (text === null ? null : new Date(text));

// Well under SQLite's 32,766 and PostgreSQL's 65,535 bound parameters per statement.
const MAX_PARAMETERS = 8_000;

const identifier = (name: string) => `"${name}"`;
const quoted = (name: string) => Prisma.raw(identifier(name));

/**
 * Multi-row INSERT of `rows` (values in `columns` order), in as few statements
 * as the parameter limit allows. Table and column names are constants of the
 * caller, never input; every value is a bound parameter.
 */
export async function insertRows(
  sql: SqlExecutor,
  table: string,
  columns: readonly string[],
  rows: readonly unknown[][],
  onConflict: Prisma.Sql = Prisma.empty,
): Promise<void> {
  const perStatement = Math.max(1, Math.floor(MAX_PARAMETERS / columns.length));
  for (let start = 0; start < rows.length; start += perStatement) {
    await sql.execute(insertStatement(table, columns, rows.slice(start, start + perStatement), onConflict));
  }
}

function insertStatement(table: string, columns: readonly string[], rows: readonly unknown[][], onConflict: Prisma.Sql): Prisma.Sql {
  const values = Prisma.join(rows.map((row) => Prisma.sql`(${Prisma.join(row)})`));
  return Prisma.sql`INSERT INTO ${quoted(table)} (${Prisma.join(columns.map(quoted))}) VALUES ${values} ${onConflict}`;
}

/** One table's rows for insertTogether, as insertRows takes them. */
export interface TableInsert {
  table: string;
  columns: readonly string[];
  rows: readonly unknown[][];
  onConflict?: Prisma.Sql;
}

// A statement of several tables' rows on PostgreSQL: its Bind message counts parameters in 16 bits.
const MAX_PARAMETERS_TOGETHER = 30_000;

/**
 * Several tables' inserts, listed in an order that is valid one after another (foreign keys
 * point to rows of an earlier entry or of the same one). On SQLite, which has no round trips,
 * that is what runs. On PostgreSQL consecutive entries share one statement of data-modifying
 * CTEs, one round trip where there were one per table, which shortens the time a writer holds
 * the writers' lock (docs/decisions/097-a-batch-s-rows-in-one-statement.md). Its foreign keys
 * are checked at the statement's end, so any order inside it is valid; a statement never
 * takes one table twice (a row inserted and then updated must be two statements: the second
 * would not see the first's row) and stays within the parameter limit.
 */
export async function insertTogether(sql: SqlExecutor, inserts: readonly TableInsert[]): Promise<void> {
  const filled = inserts.filter((insert) => insert.rows.length);
  if (databaseDialect() !== "postgresql") {
    for (const { table, columns, rows, onConflict } of filled) await insertRows(sql, table, columns, rows, onConflict);
    return;
  }
  let parts: Prisma.Sql[] = [];
  let tables = new Set<string>();
  let parameters = 0;
  const send = async () => {
    if (!parts.length) return;
    const last = parts.pop()!;
    const ctes = parts.map((part, index) => Prisma.sql`${Prisma.raw(`"w${index}"`)} AS (${part})`);
    await sql.execute(ctes.length ? Prisma.sql`WITH ${Prisma.join(ctes)} ${last}` : last);
    parts = [];
    tables = new Set();
    parameters = 0;
  };
  for (const { table, columns, rows, onConflict = Prisma.empty } of filled) {
    const perStatement = Math.max(1, Math.floor(MAX_PARAMETERS_TOGETHER / columns.length));
    for (let start = 0; start < rows.length; start += perStatement) {
      const chunk = rows.slice(start, start + perStatement);
      if (tables.has(table) || parameters + chunk.length * columns.length > MAX_PARAMETERS_TOGETHER) await send();
      parts.push(insertStatement(table, columns, chunk, onConflict));
      tables.add(table);
      parameters += chunk.length * columns.length;
    }
  }
  await send();
}

/**
 * Values per IN list. Prisma's `in:` filters on SQLite fail past 999 bound values in
 * one statement (other filters count too), and raw lists must stay under MAX_PARAMETERS:
 * every list that grows with input goes through inChunks.
 */
export const IN_LIST_MAX = 500;

/** Runs `read` once per chunk of `values` (at most `size` each) and concatenates the results, in order. */
export async function inChunks<T, R>(values: readonly T[], read: (chunk: T[]) => Promise<R[]>, size = IN_LIST_MAX): Promise<R[]> {
  const results: R[] = [];
  for (let start = 0; start < values.length; start += size) results.push(...(await read(values.slice(start, start + size))));
  return results;
}

/** `ON CONFLICT ("key", ...) DO UPDATE SET "c" = excluded."c", ...`: the same text on SQLite and PostgreSQL. */
export function updateOnConflict(key: string | readonly string[], columns: readonly string[]): Prisma.Sql {
  const keys = (typeof key === "string" ? [key] : key).map(identifier).join(", ");
  const assignments = columns.map((column) => `${identifier(column)} = excluded.${identifier(column)}`).join(", ");
  return Prisma.raw(`ON CONFLICT (${keys}) DO UPDATE SET ${assignments}`);
}

/**
 * The few places where SQLite and PostgreSQL spell a thing differently. Each
 * takes the dialect from lib/db/client.ts's `databaseDialect()`; everything else in
 * Baton's raw SQL is written once, in the subset both accept (quoted
 * identifiers, ON CONFLICT, RETURNING, TRUE/FALSE).
 */
export const dialectSql = {
  /** A top-level string field of a JSON text column, or NULL. */
  jsonText(dialect: Dialect, column: string, field: string): Prisma.Sql {
    if (!/^[a-z_]+$/.test(field)) throw new Error(`a JSON field name of letters and _, got ${field}`);
    return dialect === "postgresql"
      ? Prisma.raw(`(${column}::jsonb ->> '${field}')`)
      : Prisma.raw(`json_extract(${column}, '$.${field}')`);
  },
  /** The larger of two values (SQLite's two-argument MAX). */
  greater(dialect: Dialect, a: string, b: string): Prisma.Sql {
    return Prisma.raw(dialect === "postgresql" ? `GREATEST(${a}, ${b})` : `MAX(${a}, ${b})`);
  },
  /** An instant column as ISO 8601 text (YYYY-MM-DDTHH:MM:SS.mmm), as SQLite stores it. */
  isoText(dialect: Dialect, column: string): Prisma.Sql {
    return Prisma.raw(dialect === "postgresql" ? `to_char(${column}, 'YYYY-MM-DD"T"HH24:MI:SS.MS')` : column);
  },
  /** A column with SQLite's "do not use an index on this" hint (unary +), which PostgreSQL's planner needs not. */
  unindexed(dialect: Dialect, column: string): Prisma.Sql {
    return Prisma.raw(dialect === "postgresql" ? column : `+${column}`);
  },
  /** Case-insensitive LIKE for ASCII letters, as SQLite's LIKE is by default. */
  like(dialect: Dialect): Prisma.Sql {
    return Prisma.raw(dialect === "postgresql" ? "ILIKE" : "LIKE");
  },
};
