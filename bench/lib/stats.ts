import { statSync } from "node:fs";
import Database from "better-sqlite3";
import { backendPids, query } from "./postgresql";
import { cpuMs, type BenchDatabase } from "./server";

/** Row counts and size of a Baton database, read through a separate connection (read-only on SQLite). */
export interface DatabaseStats {
  rows: Record<"Thread" | "PacketVersion" | "Risk" | "AgentQuestion" | "LedgerEvent", number>;
  /** Threads the board reads: not archived, with an active version. */
  activeThreads: number;
  /** SQLite: the file and its write-ahead log; PostgreSQL: pg_database_size (tables, indexes, TOAST; not the server's WAL). In bytes. */
  bytes: number;
}

const TABLES = ["Thread", "PacketVersion", "Risk", "AgentQuestion", "LedgerEvent"] as const;

function fileBytes(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

function sqliteStats(sqliteFile: string): DatabaseStats {
  const db = new Database(sqliteFile, { readonly: true, fileMustExist: true });
  try {
    const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    const rows = Object.fromEntries(TABLES.map((table) => [table, count(`SELECT count(*) AS n FROM "${table}"`)])) as DatabaseStats["rows"];
    const activeThreads = count(`SELECT count(*) AS n FROM "Thread" WHERE "archived" = 0 AND "activeVersionId" IS NOT NULL`);
    return { rows, activeThreads, bytes: fileBytes(sqliteFile) + fileBytes(`${sqliteFile}-wal`) };
  } finally {
    db.close();
  }
}

async function postgresqlStats(url: string): Promise<DatabaseStats> {
  // One statement, so one snapshot; count(*) is a bigint, which node-postgres gives as text.
  const counts = TABLES.map((table) => `(SELECT count(*) FROM "${table}") AS "${table}"`).join(", ");
  const [row] = await query<Record<string, string>>(
    url,
    `SELECT ${counts}, (SELECT count(*) FROM "Thread" WHERE "archived" = FALSE AND "activeVersionId" IS NOT NULL) AS "activeThreads", ` +
      "pg_database_size(current_database()) AS bytes",
  );
  if (!row) throw new Error("the row counts query answered no row");
  const rows = Object.fromEntries(TABLES.map((table) => [table, Number(row[table])])) as DatabaseStats["rows"];
  return { rows, activeThreads: Number(row.activeThreads), bytes: Number(row.bytes) };
}

export async function databaseStats(database: BenchDatabase): Promise<DatabaseStats> {
  if (database.sqliteFile) return sqliteStats(database.sqliteFile);
  return postgresqlStats(database.url);
}

/**
 * CPU time the database server spends for this run, from a start point: the
 * PostgreSQL backends serving the run's database (read in /proc, so only for a
 * server on this machine; NaN otherwise). Background processes (WAL writer,
 * checkpointer) are not counted. SQLite runs inside the app's process, where
 * its time is already counted: null.
 */
export interface DatabaseCpu {
  /** ms since the start point. */
  since(): Promise<number>;
}

export async function databaseCpu(database: BenchDatabase): Promise<DatabaseCpu | null> {
  if (!database.postgresql) return null;
  const { serverUrl, own } = database.postgresql;
  const cpuOf = async () => new Map((await backendPids(serverUrl, own.name)).map((pid) => [pid, cpuMs(pid)]));
  const start = await cpuOf();
  return {
    async since() {
      let total = 0;
      // A backend that started meanwhile counts whole; one that ended meanwhile is lost (the pools keep theirs open),
      // also when it ends between the query and the read of its /proc entry (NaN).
      for (const [pid, ms] of await cpuOf()) {
        const before = start.get(pid) ?? 0;
        if (Number.isFinite(ms) && Number.isFinite(before)) total += ms - before;
      }
      return total;
    },
  };
}
