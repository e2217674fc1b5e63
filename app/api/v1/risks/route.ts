import { defineRoute } from "@/lib/http/route";
import { riskListDto } from "@/lib/views/risks/dto";
import { riskListQuerySchema } from "@/lib/views/risks/filters";
import { listRisks } from "@/lib/views/risks/queries";

export const GET = defineRoute({
  method: "GET",
  path: "/api/v1/risks",
  summary:
    "The risks of every active packet, grouped by fingerprint, regressed first, then by severity; `state=all` adds resolved and snoozed ones. Paged: whole groups up to `limit` thread risks; pass `next_cursor` back as `cursor` for the rest.",
  auth: { kind: "reader" },
  query: riskListQuerySchema,
  response: { kind: "json", status: 200, schema: riskListDto },
  handler: ({ query }) => listRisks(query),
});
