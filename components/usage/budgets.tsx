"use client";

import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { localProblem } from "@/lib/browser/problem";
import { sendJson } from "@/lib/browser/send-json";
import { BUDGET_PERIODS, budgetDto, type BudgetDto, type BudgetPeriod } from "@/lib/views/usage/dto";
import { AgentText } from "@/components/ui/agent-text";
import { FormAlert } from "@/components/ui/alert";
import { Button, SubmitButton } from "@/components/ui/button";
import { ChoiceSelect, Field, Input } from "@/components/ui/field";
import { useFormProblem } from "@/components/ui/form-panel";
import { money } from "./usage-chart";

const LABELS = { project: "Project", period: "Period", amount: "Amount", currency: "Currency" };
const PERIOD_LABELS: Record<BudgetPeriod, string> = { day: "per day", month: "per month" };

/** The budgets with this period's spending; admins add and remove them. */
export function Budgets({ budgets, canAdminister }: { budgets: BudgetDto[]; canAdminister: boolean }) {
  const router = useRouter();
  const form = useFormProblem(LABELS);
  const [values, setValues] = useState({ project: "", period: "day" as BudgetPeriod, amount: "", currency: "USD" });
  const [sending, setSending] = useState(false);
  const set = (change: Partial<typeof values>) => setValues((before) => ({ ...before, ...change }));

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const amount = Number(values.amount);
    if (!values.project.trim()) return form.setProblem(localProblem(["project"], "Project: name the project as its packets do."));
    if (!(amount > 0)) return form.setProblem(localProblem(["amount"], "Amount: give a number above 0."));
    setSending(true);
    const added = await form.send(() => sendJson("POST", "/api/v1/budgets", { ...values, amount }, budgetDto), "Adding the budget failed.");
    setSending(false);
    if (!added) return;
    set({ project: "", amount: "" });
    router.refresh();
  }

  async function remove(budget: BudgetDto) {
    const removed = await form.send(() => sendJson("DELETE", `/api/v1/budgets/${encodeURIComponent(budget.id)}`, undefined, budgetDto), "Removing the budget failed.");
    if (removed) router.refresh();
  }

  return (
    <div className="space-y-3">
      {budgets.length ? (
        <ul className="space-y-1 text-sm" aria-label="Budgets">
          {budgets.map((budget) => (
            <li key={budget.id} className="flex flex-wrap items-center gap-2">
              <AgentText className="font-mono" text={budget.project} /> · per {budget.period}: {money(budget.spent, budget.currency)} of {money(budget.amount, budget.currency)}
              {budget.crossed ? <span className="font-semibold text-danger">crossed</span> : null}
              {canAdminister ? (
                <Button variant="link" onClick={() => void remove(budget)} aria-label={`Remove the ${budget.period} budget of ${budget.project}`}>
                  Remove
                </Button>
              ) : null}
            </li>
          ))}
        </ul>
      ) : (
        <p className="text-sm text-muted">No budgets.</p>
      )}
      {canAdminister ? (
        <form onSubmit={submit} aria-label="Add a budget" className="flex flex-wrap items-end gap-3" noValidate>
          <FormAlert problem={form.problem} id={form.alertId} />
          <Field label="Project">
            <Input name="project" value={values.project} onChange={(input) => set({ project: input.target.value })} autoComplete="off" className="max-w-xs" {...form.aria("project")} />
          </Field>
          <Field label="Period">
            <ChoiceSelect name="period" value={values.period} choices={BUDGET_PERIODS} labels={PERIOD_LABELS} onChoose={(period) => set({ period })} {...form.aria("period")} />
          </Field>
          <Field label="Amount">
            <Input name="amount" inputMode="decimal" value={values.amount} onChange={(input) => set({ amount: input.target.value })} className="w-28" {...form.aria("amount")} />
          </Field>
          <Field label="Currency">
            <Input name="currency" value={values.currency} maxLength={3} onChange={(input) => set({ currency: input.target.value })} className="w-20 uppercase" {...form.aria("currency")} />
          </Field>
          <SubmitButton pending={sending}>Add budget</SubmitButton>
        </form>
      ) : null}
    </div>
  );
}
