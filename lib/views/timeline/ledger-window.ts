import "server-only";
import type { SqlExecutor } from "../../db/client";
import { Prisma } from "../../generated/prisma/client";

/**
 * Events are appended with the time they happened, which can trail the time of
 * an event appended before them (a batch's packets keep their arrival times, the
 * CLI writes from another process): the search allows this much.
 */
export const LEDGER_CLOCK_SLACK_MS = 3_600_000;

/**
 * Up to this many threads, a query of their ledger events reads each thread's
 * events over the (threadKey, seq) index; past it, the kind or the seq order
 * leads (whichever SQLite prefers), which stays cheap however many threads there are.
 */
export const LEDGER_INDEXED_KEYS_MAX = 25;

/**
 * The smallest seq that can hold an event at or after `at`, found by a binary
 * search over the primary key (LedgerEvent.at has no index): about twenty
 * point reads instead of a scan. Callers still filter on `at` itself.
 */
export async function firstSeqFrom(sql: SqlExecutor, at: Date): Promise<number> {
  const bound = new Date(at.getTime() - LEDGER_CLOCK_SLACK_MS);
  // Two subqueries: MIN and MAX together in one SELECT would scan the table.
  const [range] = await sql.query<{ low: number | bigint | null; high: number | bigint | null }>(
    Prisma.sql`SELECT (SELECT MIN("seq") FROM "LedgerEvent") AS "low", (SELECT MAX("seq") FROM "LedgerEvent") AS "high"`,
  );
  let low = Number(range?.low ?? 0);
  let high = Number(range?.high ?? 0) + 1;
  // Invariant: every seq below `low` is before `bound`; `high` is past the answer.
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    const [row] = await sql.query<{ seq: number | bigint; at: string }>(
      Prisma.sql`SELECT "seq", "at" FROM "LedgerEvent" WHERE "seq" >= ${middle} ORDER BY "seq" LIMIT 1`,
    );
    if (!row) {
      high = middle;
    } else if (new Date(row.at).getTime() < bound.getTime()) {
      low = Number(row.seq) + 1;
    } else {
      high = middle;
    }
  }
  return low;
}
