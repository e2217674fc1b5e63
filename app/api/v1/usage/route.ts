import { defineRoute } from "@/lib/http/route";
import { usageDto, usageQuerySchema } from "@/lib/views/usage/dto";
import { loadUsage } from "@/lib/views/usage/usage";

export const GET = defineRoute({
  method: "GET",
  path: "/api/v1/usage",
  summary: "The packets' usage summed per agent, project and day (per currency) over the last `days` (1 to 90, default 30), and the budgets with this period's spending.",
  auth: { kind: "reader" },
  query: usageQuerySchema,
  response: { kind: "json", status: 200, schema: usageDto },
  handler: ({ query }) => loadUsage(query),
});
