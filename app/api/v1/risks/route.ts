import { jsonResponse } from "@/lib/http/respond";
import { parseQuery } from "@/lib/http/query";
import { readRoute } from "@/lib/http/route";
import { riskFiltersSchema } from "@/lib/risks/filters";
import { listRisks } from "@/lib/risks/queries";

/**
 * GET /api/v1/risks (read: token or session): every risk of every active packet,
 * grouped by fingerprint, regressed first, then by severity. `?state=all` also
 * lists resolved and snoozed risks; `?q=` filters by detail, thread or agent.
 */
export const GET = readRoute(async ({ request }) => jsonResponse(await listRisks(parseQuery(request, riskFiltersSchema))));
