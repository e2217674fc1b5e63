import { defineRoute } from "@/lib/http/route";
import { riskListDto } from "@/lib/views/risks/dto";
import { riskFiltersSchema } from "@/lib/views/risks/filters";
import { listRisks } from "@/lib/views/risks/queries";

export const GET = defineRoute({
  method: "GET",
  path: "/api/v1/risks",
  summary: "Every risk of every active packet, grouped by fingerprint, regressed first, then by severity; `state=all` adds resolved and snoozed ones.",
  auth: { kind: "reader" },
  query: riskFiltersSchema,
  response: { kind: "json", status: 200, schema: riskListDto },
  handler: ({ query }) => listRisks(query),
});
