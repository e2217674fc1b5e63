import "server-only";
import type { CanonicalPacket } from "../../contract/canonical";
import type { SqlExecutor } from "../../db/client";
import { Prisma } from "../../generated/prisma/client";
import { inChunks } from "../../db/sql";
import type { NewLedgerEvent } from "../../events/ledger";
import type { BudgetPeriod } from "./dto";

/** The PacketUsage columns, in the order of the rows below (lib/db/sql.ts insertRows). */
export const USAGE_COLUMNS = ["versionId", "threadKey", "agent", "project", "day", "inputTokens", "outputTokens", "costAmount", "costCurrency", "model", "durationMs"] as const;

export const utcDay = (at: Date) => at.toISOString().slice(0, 10);
/** Where a budget's period starts: the day, or the month's first day, as YYYY-MM-DD (UTC). */
export const periodStart = (period: BudgetPeriod, at: Date) => (period === "day" ? utcDay(at) : `${at.toISOString().slice(0, 7)}-01`);

/** One PacketUsage row for a stored version that reported usage, written in the version's transaction. */
export function packetUsageRows(canonical: CanonicalPacket, version: { versionId: string; threadKey: string; receivedAt: Date }): unknown[][] {
  const usage = canonical.usage;
  if (!usage) return [];
  return [
    [
      version.versionId,
      version.threadKey,
      canonical.agent?.name ?? null,
      canonical.project ?? null,
      utcDay(version.receivedAt),
      usage.input_tokens ?? null,
      usage.output_tokens ?? null,
      usage.cost?.amount ?? null,
      usage.cost?.currency ?? null,
      usage.model ?? null,
      usage.duration_ms ?? null,
    ],
  ];
}

/** The BudgetCrossing columns, in the order of budgetCrossings' rows. */
export const BUDGET_CROSSING_COLUMNS = ["budgetId", "periodStart", "total", "at"] as const;

/**
 * Before a batch's usage rows are written, in its transaction: each budget of the projects that
 * spend in the batch is summed over its current period (the stored rows and the batch's), and
 * one crossed for the first time in that period gives a BudgetCrossing row and a
 * `budget_crossed` ledger event, which the batch writes with its other rows. Writers take turns
 * (lib/db/client.ts inSqlTransaction), so the read and the write cannot race; BudgetCrossing's
 * key keeps one crossing per budget and period anyway.
 */
export async function budgetCrossings(
  sql: SqlExecutor,
  usageRows: readonly unknown[][],
  at: Date,
): Promise<{ rows: unknown[][]; events: NewLedgerEvent[] }> {
  // Project -> its last packet with a cost in the batch: the crossing's thread, and the day that decides the period.
  const spending = new Map<string, { threadKey: string; day: string }>();
  for (const row of usageRows) if (row[3] !== null && row[7] !== null) spending.set(row[3] as string, { threadKey: row[1] as string, day: row[4] as string });
  if (!spending.size) return { rows: [], events: [] };
  const budgets = await inChunks([...spending.keys()], (projects) =>
    sql.query<{ id: string; project: string; period: string; amount: number; currency: string }>(
      Prisma.sql`SELECT "id", "project", "period", "amount", "currency" FROM "Budget" WHERE "project" IN (${Prisma.join(projects)})`,
    ),
  );
  const rows: unknown[][] = [];
  const events: NewLedgerEvent[] = [];
  for (const budget of budgets) {
    const last = spending.get(budget.project)!;
    const start = periodStart(budget.period as BudgetPeriod, new Date(`${last.day}T00:00:00Z`));
    const [stored] = await sql.query<{ spent: number | null; crossings: number | bigint }>(
      Prisma.sql`SELECT
        (SELECT SUM("costAmount") FROM "PacketUsage" WHERE "project" = ${budget.project} AND "costCurrency" = ${budget.currency} AND "day" >= ${start}) AS "spent",
        (SELECT COUNT(*) FROM "BudgetCrossing" WHERE "budgetId" = ${budget.id} AND "periodStart" = ${start}) AS "crossings"`,
    );
    if (Number(stored?.crossings ?? 0) > 0) continue;
    let spent = stored?.spent ?? 0;
    for (const row of usageRows) {
      if (row[3] === budget.project && row[8] === budget.currency && (row[4] as string) >= start && row[7] !== null) spent += row[7] as number;
    }
    if (spent < budget.amount) continue;
    rows.push([budget.id, start, spent, at]);
    events.push({
      kind: "budget_crossed",
      threadKey: last.threadKey,
      actor: "baton",
      data: { budget_id: budget.id, project: budget.project, period: budget.period, period_start: start, amount: budget.amount, currency: budget.currency, spent },
    });
  }
  return { rows, events };
}
