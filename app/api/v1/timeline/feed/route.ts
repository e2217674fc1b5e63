import { jsonResponse } from "@/lib/http/respond";
import { parseQuery } from "@/lib/http/query";
import { readRoute } from "@/lib/http/route";
import { timelineFeedQuerySchema } from "@/lib/timeline/dto";
import { listTimelineFeed } from "@/lib/timeline/feed";

/** GET /api/v1/timeline/feed?before=<seq> and the timeline's query: a page of the ledger of the timeline's threads, newest first. */
export const GET = readRoute(async ({ request }) => jsonResponse(await listTimelineFeed(parseQuery(request, timelineFeedQuerySchema))));
