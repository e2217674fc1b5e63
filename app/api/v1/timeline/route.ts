import { jsonResponse } from "@/lib/http/respond";
import { parseQuery } from "@/lib/http/query";
import { readRoute } from "@/lib/http/route";
import { loadTimeline, timelineQuerySchema } from "@/lib/timeline/queries";

/**
 * GET /api/v1/timeline?window=6h|24h|7d|30d and the board's filters: one lane per
 * matching thread with its versions, decisions and session reports in the
 * window, and the first page of their ledger feed.
 */
export const GET = readRoute(async ({ request }) => jsonResponse(await loadTimeline(parseQuery(request, timelineQuerySchema))));
