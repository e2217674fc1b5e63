import { apiRoute } from "@/lib/http/route";
import { jsonResponse } from "@/lib/http/respond";
import { getThreadDetail } from "@/lib/threads/queries";

/** GET /api/v1/threads/{key}: the thread's card and its version history. */
export const GET = apiRoute<{ key: string }>("packets:read", async ({ params }) =>
  jsonResponse(await getThreadDetail(params.key)),
);
