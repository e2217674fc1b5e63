import { jsonResponse } from "@/lib/http/respond";
import { parseQuery } from "@/lib/http/query";
import { readRoute } from "@/lib/http/route";
import { lessonsQuerySchema, listLessons } from "@/lib/lessons/queries";

/** GET /api/v1/lessons?q=: failed attempts that repeat across versions and threads in the last 30 days, newest first. */
export const GET = readRoute(async ({ request }) => jsonResponse(await listLessons(parseQuery(request, lessonsQuerySchema))));
