import Link from "next/link";
import type { BudgetDto } from "@/lib/views/usage/dto";
import { AgentText } from "@/components/ui/agent-text";
import { money } from "./usage-chart";

/** Above the board: the budgets crossed in their current period. */
export function BudgetNotice({ budgets }: { budgets: BudgetDto[] }) {
  if (!budgets.length) return null;
  return (
    <p role="status" className="rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-950 ring-1 ring-amber-200 dark:bg-amber-950 dark:text-amber-100 dark:ring-amber-900">
      Over budget:{" "}
      {budgets.map((budget, index) => (
        <span key={budget.id}>
          {index ? "; " : ""}
          <AgentText text={budget.project} /> spent {money(budget.spent, budget.currency)} this {budget.period} (budget {money(budget.amount, budget.currency)})
        </span>
      ))}
      .{" "}
      <Link href="/usage" prefetch={false} className="text-link underline">
        Usage
      </Link>
    </p>
  );
}
