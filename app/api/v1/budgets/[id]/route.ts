import { z } from "zod";
import { defineRoute } from "@/lib/http/route";
import { budgetDto } from "@/lib/views/usage/dto";
import { deleteBudget } from "@/lib/views/usage/usage";

export const DELETE = defineRoute({
  method: "DELETE",
  path: "/api/v1/budgets/{id}",
  summary: "Removes a budget and its crossings; answers what was deleted.",
  auth: { kind: "person", role: "admin" },
  params: z.object({ id: z.string() }),
  response: { kind: "json", status: 200, schema: budgetDto },
  errors: ["not_found"],
  handler: ({ params }) => deleteBudget(params.id),
});
