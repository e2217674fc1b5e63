import { readRoute } from "@/lib/http/route";
import { jsonResponse } from "@/lib/http/respond";
import { getThreadDetail } from "@/lib/threads/queries";

/** GET /api/v1/threads/{key}: the thread's card and its version history. */
export const GET = readRoute<{ key: string }>(async ({ params }) =>
  jsonResponse(await getThreadDetail(params.key)),
);
