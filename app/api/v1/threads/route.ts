import { readRoute } from "@/lib/http/route";
import { jsonResponse } from "@/lib/http/respond";
import { parseQuery } from "@/lib/http/query";
import { threadListQuerySchema } from "@/lib/threads/filters";
import { listActiveThreads } from "@/lib/threads/queries";

/** GET /api/v1/threads: active threads with a card summary; filters and cursor pagination. */
export const GET = readRoute(async ({ request }) =>
  jsonResponse(await listActiveThreads(parseQuery(request, threadListQuerySchema))),
);
