import "server-only";
import { BatonError } from "../../core/errors";
import { database, inTransaction } from "../../db/client";
import { newId } from "../../db/ids";
import type { Prisma } from "../../generated/prisma/client";
import { periodStart, utcDay } from "./ingest-usage";
import { budgetDto, USAGE_ROWS_MAX, usageDto, type BudgetDto, type BudgetPeriod, type NewBudget, type UsageDto, type UsageQuery, type UsageTotalDto } from "./dto";

/** Sums of the packets' usage per agent, project and day, and the budgets (docs/using.md#usage-and-budgets). */

/** Budgets shown and checked at most: a handful per project. */
export const BUDGETS_MAX = 200;
const DAY_MS = 86_400_000;

type Sums = { _count: { _all: number }; _sum: { inputTokens: number | null; outputTokens: number | null; costAmount: number | null; durationMs: number | null } };
const total = (key: string | null, currency: string | null, sums: Sums): UsageTotalDto => ({
  key,
  currency,
  packets: sums._count._all,
  input_tokens: sums._sum.inputTokens ?? 0,
  output_tokens: sums._sum.outputTokens ?? 0,
  cost: sums._sum.costAmount ?? 0,
  duration_ms: sums._sum.durationMs ?? 0,
});
const SUMS = { _count: { _all: true }, _sum: { inputTokens: true, outputTokens: true, costAmount: true, durationMs: true } } as const;

async function budgetsWithSpending(now: Date, where: Prisma.BudgetWhereInput = {}): Promise<BudgetDto[]> {
  const db = await database();
  const budgets = await db.budget.findMany({ where, orderBy: [{ project: "asc" }, { period: "asc" }], take: BUDGETS_MAX });
  return Promise.all(
    budgets.map(async (budget) => {
      const start = periodStart(budget.period as BudgetPeriod, now);
      const [{ _sum }, crossing] = await Promise.all([
        db.packetUsage.aggregate({ where: { project: budget.project, costCurrency: budget.currency, day: { gte: start } }, _sum: { costAmount: true } }),
        db.budgetCrossing.findUnique({ where: { budgetId_periodStart: { budgetId: budget.id, periodStart: start } } }),
      ]);
      return budgetDto.parse({
        id: budget.id,
        project: budget.project,
        period: budget.period,
        amount: budget.amount,
        currency: budget.currency,
        spent: _sum.costAmount ?? 0,
        crossed: crossing !== null,
      });
    }),
  );
}

export async function loadUsage(query: UsageQuery, now = new Date()): Promise<UsageDto> {
  const db = await database();
  const since = utcDay(new Date(now.getTime() - (query.days - 1) * DAY_MS));
  const where: Prisma.PacketUsageWhereInput = { day: { gte: since }, ...(query.project ? { project: query.project } : {}) };
  const [byAgent, byProject, byDay, budgets] = await Promise.all([
    db.packetUsage.groupBy({ by: ["agent", "costCurrency"], where, ...SUMS, orderBy: { _sum: { costAmount: "desc" } }, take: USAGE_ROWS_MAX }),
    db.packetUsage.groupBy({ by: ["project", "costCurrency"], where, ...SUMS, orderBy: { _sum: { costAmount: "desc" } }, take: USAGE_ROWS_MAX }),
    db.packetUsage.groupBy({ by: ["day", "costCurrency"], where, ...SUMS, orderBy: { day: "asc" }, take: USAGE_ROWS_MAX * 2 }),
    budgetsWithSpending(now, query.project ? { project: query.project } : {}),
  ]);
  return usageDto.parse({
    since,
    days: query.days,
    by_agent: byAgent.map((row) => total(row.agent, row.costCurrency, row)),
    by_project: byProject.map((row) => total(row.project, row.costCurrency, row)),
    by_day: byDay.map((row) => total(row.day, row.costCurrency, row)),
    budgets,
  });
}

/** Crossings the board's notice lists at most. */
export const NOTICE_MAX = 10;

/** The budgets crossed in their current period: the notice above the board (two reads, whatever the budgets). */
export async function crossedBudgets(now = new Date()): Promise<BudgetDto[]> {
  const db = await database();
  const starts = { day: periodStart("day", now), month: periodStart("month", now) };
  const crossings = await db.budgetCrossing.findMany({ where: { periodStart: { in: [starts.day, starts.month] } }, orderBy: { at: "desc" }, take: NOTICE_MAX * 2 });
  const budgets = new Map((await db.budget.findMany({ where: { id: { in: crossings.map((crossing) => crossing.budgetId) } } })).map((budget) => [budget.id, budget]));
  return crossings
    .flatMap((crossing) => {
      const budget = budgets.get(crossing.budgetId);
      // A month's crossing starts on the 1st, as a day's does that day: only the budget's own period counts.
      if (!budget || starts[budget.period as BudgetPeriod] !== crossing.periodStart) return [];
      return [budgetDto.parse({ id: budget.id, project: budget.project, period: budget.period, amount: budget.amount, currency: budget.currency, spent: crossing.total, crossed: true })];
    })
    .slice(0, NOTICE_MAX);
}

export async function createBudget(actor: string, budget: NewBudget): Promise<BudgetDto> {
  const now = new Date();
  const db = await database();
  if (await db.budget.findUnique({ where: { project_period_currency: { project: budget.project, period: budget.period, currency: budget.currency } } })) {
    throw new BatonError("conflict", `"${budget.project}" already has a ${budget.period} budget in ${budget.currency}; delete it first to change it.`);
  }
  const id = newId("bud", now.getTime());
  await db.budget.create({ data: { id, ...budget, createdAt: now, createdBy: actor } });
  return (await budgetsWithSpending(now, { id }))[0]!;
}

export async function deleteBudget(id: string): Promise<BudgetDto> {
  const now = new Date();
  const [budget] = await budgetsWithSpending(now, { id });
  if (!budget) throw new BatonError("not_found", `No budget has the id "${id}"; list them with GET /api/v1/usage.`);
  await inTransaction(async (tx) => {
    await tx.budgetCrossing.deleteMany({ where: { budgetId: id } });
    await tx.budget.delete({ where: { id } });
  });
  return budget;
}
