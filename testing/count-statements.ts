import Database from "better-sqlite3";
import pg from "pg";

type Methods = Record<string, (...args: unknown[]) => unknown>;

/**
 * For tests: counts every SQL statement this process runs from now until `stop()`, on
 * either database. On SQLite, Prisma's adapter, the hot-path executor and the ledger feed
 * all run theirs through better-sqlite3's Statement (or exec); on PostgreSQL, Prisma's
 * adapter and the ledger feed run theirs through node-postgres's Client.query (`rows`
 * counts SQLite's rows only).
 */
export function countStatements(): { count: () => number; rows: () => number; stop: () => void } {
  const probe = new Database(":memory:");
  const statement = Object.getPrototypeOf(probe.prepare("SELECT 1")) as Methods;
  probe.close();
  const connection = Database.prototype as unknown as Methods;
  const postgresql = pg.Client.prototype as unknown as Methods;
  let count = 0;
  let rows = 0;
  const restore: (() => void)[] = [];
  const targets: [Methods, string][] = [
    [statement, "run"],
    [statement, "get"],
    [statement, "all"],
    [statement, "iterate"],
    [connection, "exec"],
    [postgresql, "query"],
  ];
  for (const [target, name] of targets) {
    const original = target[name]!;
    target[name] = function (this: unknown, ...args: unknown[]) {
      count++;
      const result = original.apply(this, args);
      if (name === "all" && Array.isArray(result)) rows += result.length;
      return result;
    };
    restore.push(() => (target[name] = original));
  }
  return { count: () => count, rows: () => rows, stop: () => restore.forEach((undo) => undo()) };
}

/** How many SQL statements `work` runs (see countStatements). */
export async function statementsOf(work: () => Promise<unknown>): Promise<number> {
  const counter = countStatements();
  try {
    await work();
    return counter.count();
  } finally {
    counter.stop();
  }
}
