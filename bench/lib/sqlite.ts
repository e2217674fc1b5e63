import { statSync } from "node:fs";
import Database from "better-sqlite3";

/** Row counts and size of a Baton SQLite file, read through a separate read-only connection. */
export interface DatabaseStats {
  rows: Record<"Thread" | "PacketVersion" | "Risk" | "AgentQuestion" | "LedgerEvent", number>;
  /** Threads the board reads: not archived, with an active version. */
  activeThreads: number;
  /** The file and its write-ahead log, in bytes. */
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

export function databaseStats(sqliteFile: string): DatabaseStats {
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
