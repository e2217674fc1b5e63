import { defineRoute } from "@/lib/http/route";
import { budgetDto, newBudgetSchema } from "@/lib/views/usage/dto";
import { createBudget } from "@/lib/views/usage/usage";

export const POST = defineRoute({
  method: "POST",
  path: "/api/v1/budgets",
  summary: "Sets a budget for a project per day or month in one currency; crossing it records `budget_crossed` (webhook event `budget.crossed`) once per period.",
  auth: { kind: "person", role: "admin" },
  body: { schema: newBudgetSchema, name: "budget" },
  response: { kind: "json", status: 201, schema: budgetDto },
  errors: ["conflict"],
  handler: ({ person, body }) => createBudget(person.username, body),
});
