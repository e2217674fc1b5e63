import { z } from "zod";
import { displayNameSchema } from "../../contract/display-name";

/** The usage page's shapes: sums of the packets' `usage` (docs/contract.md#other-fields). No server code here. */

export const BUDGET_PERIODS = ["day", "month"] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];
const budgetPeriodSchema = z.enum(BUDGET_PERIODS, { error: "period must be day or month" });

/** Rows per grouping, largest cost first. */
export const USAGE_ROWS_MAX = 100;

export const usageTotalDto = z.object({
  /** The agent, project or day; null for packets that named none. */
  key: z.string().nullable(),
  currency: z.string().nullable(),
  packets: z.number().int(),
  input_tokens: z.number(),
  output_tokens: z.number(),
  cost: z.number(),
  duration_ms: z.number(),
});
export type UsageTotalDto = z.infer<typeof usageTotalDto>;

/** Days the page sums at most (the chart's width). */
export const USAGE_DAYS_MAX = 90;
export const usageQuerySchema = z.object({
  days: z.coerce.number({ error: `days must be a number of days, 1 to ${USAGE_DAYS_MAX}` }).int().min(1).max(USAGE_DAYS_MAX).default(30),
  project: z.string().min(1).max(500).optional(),
});
export type UsageQuery = z.infer<typeof usageQuerySchema>;

export const budgetDto = z.object({
  id: z.string(),
  period: budgetPeriodSchema,
  project: z.string(),
  amount: z.number(),
  currency: z.string(),
  /** Spent in the current period, and whether the budget is crossed. */
  spent: z.number(),
  crossed: z.boolean(),
});
export type BudgetDto = z.infer<typeof budgetDto>;

export const usageDto = z.object({
  since: z.string(),
  days: z.number().int(),
  by_agent: z.array(usageTotalDto),
  by_project: z.array(usageTotalDto),
  by_day: z.array(usageTotalDto),
  budgets: z.array(budgetDto),
});
export type UsageDto = z.infer<typeof usageDto>;

export const newBudgetSchema = z.strictObject({
  project: displayNameSchema("project", 500),
  period: budgetPeriodSchema,
  amount: z.number({ error: "amount must be a number" }).positive("amount must be more than 0"),
  currency: z
    .string()
    .regex(/^[A-Za-z]{3}$/, "currency must be three letters, e.g. USD")
    .transform((value) => value.toUpperCase())
    .default("USD"),
});
export type NewBudget = z.infer<typeof newBudgetSchema>;

/** One packet's usage, as a card shows it. */
export const cardUsageDto = z.object({
  input_tokens: z.number().nullable(),
  output_tokens: z.number().nullable(),
  cost: z.object({ amount: z.number(), currency: z.string() }).nullable(),
  model: z.string().nullable(),
  duration_ms: z.number().nullable(),
});
export type CardUsageDto = z.infer<typeof cardUsageDto>;

