"use client";

import { useRouter } from "next/navigation";
import { useId, useState, type FormEvent } from "react";
import { z } from "zod";
import { localProblem, problemOf, type Problem } from "@/lib/browser/problem";
import { sendJson } from "@/lib/browser/send-json";
import { BUDGET_PERIODS, budgetDto, type BudgetDto, type BudgetPeriod } from "@/lib/views/usage/dto";
import { AgentText } from "@/components/ui/agent-text";
import { FormAlert } from "@/components/ui/alert";
import { Button, SubmitButton } from "@/components/ui/button";
import { Field, fieldAria, Input, Select } from "@/components/ui/field";
import { money } from "./usage-chart";

const LABELS = { project: "Project", period: "Period", amount: "Amount", currency: "Currency" };

/** The budgets with this period's spending; admins add and remove them. */
export function Budgets({ budgets, canAdminister }: { budgets: BudgetDto[]; canAdminister: boolean }) {
  const id = useId();
  const alertId = `${id}-alert`;
  const router = useRouter();
  const [form, setForm] = useState({ project: "", period: "day" as BudgetPeriod, amount: "", currency: "USD" });
  const [problem, setProblem] = useState<Problem | null>(null);
  const [sending, setSending] = useState(false);
  const set = (change: Partial<typeof form>) => setForm((before) => ({ ...before, ...change }));

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const amount = Number(form.amount);
    if (!form.project.trim()) return setProblem(localProblem(["project"], "Project: name the project as its packets do."));
    if (!(amount > 0)) return setProblem(localProblem(["amount"], "Amount: give a number above 0."));
    setProblem(null);
    setSending(true);
    const result = await sendJson("POST", "/api/v1/budgets", { ...form, amount }, budgetDto);
    setSending(false);
    if (!result.ok) return setProblem(problemOf(result, LABELS));
    set({ project: "", amount: "" });
    router.refresh();
  }

  async function remove(budget: BudgetDto) {
    const result = await sendJson("DELETE", `/api/v1/budgets/${encodeURIComponent(budget.id)}`, undefined, z.unknown());
    if (!result.ok) return setProblem(problemOf(result, LABELS));
    router.refresh();
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
          <FormAlert problem={problem} id={alertId} />
          <Field label="Project">
            <Input name="project" value={form.project} onChange={(input) => set({ project: input.target.value })} autoComplete="off" className="max-w-xs" {...fieldAria(problem, "project", alertId)} />
          </Field>
          <Field label="Period">
            <Select name="period" value={form.period} onChange={(input) => set({ period: input.target.value as BudgetPeriod })} {...fieldAria(problem, "period", alertId)}>
              {BUDGET_PERIODS.map((period) => (
                <option key={period} value={period}>
                  per {period}
                </option>
              ))}
            </Select>
          </Field>
          <Field label="Amount">
            <Input name="amount" inputMode="decimal" value={form.amount} onChange={(input) => set({ amount: input.target.value })} className="w-28" {...fieldAria(problem, "amount", alertId)} />
          </Field>
          <Field label="Currency">
            <Input name="currency" value={form.currency} maxLength={3} onChange={(input) => set({ currency: input.target.value })} className="w-20 uppercase" {...fieldAria(problem, "currency", alertId)} />
          </Field>
          <SubmitButton pending={sending}>Add budget</SubmitButton>
        </form>
      ) : null}
    </div>
  );
}
