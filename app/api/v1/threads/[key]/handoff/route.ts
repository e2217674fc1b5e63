import { conditionalJsonResponse } from "@/lib/http/etag";
import { readRoute } from "@/lib/http/route";
import { getMergedHandoff } from "@/lib/threads/queries";

/**
 * GET /api/v1/threads/{key}/handoff: the merged packet the next session reads.
 * Tagged with a strong ETag of the bytes served; `If-None-Match` revalidates (304).
 */
export const GET = readRoute<{ key: string }>(async ({ request, params }) => {
  const { packetId, body } = await getMergedHandoff(params.key);
  return conditionalJsonResponse(request, body, { "baton-packet-id": packetId });
});
