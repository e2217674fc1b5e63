import Database from "better-sqlite3";
import pg from "pg";

type Methods = Record<string, (...args: unknown[]) => unknown>;

/**
 * For tests: counts every SQL statement this process runs from now until `stop()`, on
 * either database. On SQLite, Prisma's adapter, the hot-path executor and the ledger feed
 * all run theirs through better-sqlite3's Statement (or exec); on PostgreSQL, Prisma's
 * adapter and the ledger feed run theirs through node-postgres's Client.query (`rows`
 * counts SQLite's rows only; `texts` gives each statement's SQL).
 */
export function countStatements(): { count: () => number; rows: () => number; texts: () => string[]; stop: () => void } {
  const probe = new Database(":memory:");
  const statement = Object.getPrototypeOf(probe.prepare("SELECT 1")) as Methods;
  probe.close();
  const connection = Database.prototype as unknown as Methods;
  const postgresql = pg.Client.prototype as unknown as Methods;
  const texts: string[] = [];
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
      texts.push(statementText(target === statement ? (this as { source: string }).source : args[0]));
      const result = original.apply(this, args);
      if (name === "all" && Array.isArray(result)) rows += result.length;
      return result;
    };
    restore.push(() => (target[name] = original));
  }
  return { count: () => texts.length, rows: () => rows, texts: () => [...texts], stop: () => restore.forEach((undo) => undo()) };
}

/** A statement's SQL as its driver got it: a string, or node-postgres's query config. */
const statementText = (sql: unknown) => (typeof sql === "string" ? sql : String((sql as { text?: unknown } | null)?.text ?? ""));

/** How many SQL statements `work` runs (see countStatements). */
export async function statementsOf(work: () => Promise<unknown>): Promise<number> {
  return (await statementTextsOf(work)).length;
}

/** The SQL of each statement `work` runs, in order (see countStatements). */
export async function statementTextsOf(work: () => Promise<unknown>): Promise<string[]> {
  const counter = countStatements();
  try {
    await work();
    return counter.texts();
  } finally {
    counter.stop();
  }
}
