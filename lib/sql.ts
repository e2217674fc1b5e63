import type { SqlExecutor } from "./db";
import { Prisma } from "./generated/prisma/client";

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
  const columnList = Prisma.join(columns.map(quoted));
  for (let start = 0; start < rows.length; start += perStatement) {
    const chunk = rows.slice(start, start + perStatement);
    const values = Prisma.join(chunk.map((row) => Prisma.sql`(${Prisma.join(row)})`));
    await sql.execute(Prisma.sql`INSERT INTO ${quoted(table)} (${columnList}) VALUES ${values} ${onConflict}`);
  }
}

/** `ON CONFLICT ("key") DO UPDATE SET "c" = excluded."c", ...`: the same text on SQLite and PostgreSQL. */
export function updateOnConflict(key: string, columns: readonly string[]): Prisma.Sql {
  const assignments = columns.map((column) => `${identifier(column)} = excluded.${identifier(column)}`).join(", ");
  return Prisma.raw(`ON CONFLICT (${identifier(key)}) DO UPDATE SET ${assignments}`);
}
