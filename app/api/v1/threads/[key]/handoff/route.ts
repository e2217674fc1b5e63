import { apiRoute } from "@/lib/http/route";
import { jsonResponse } from "@/lib/http/respond";
import { getMergedHandoff } from "@/lib/threads/queries";

/** GET /api/v1/threads/{key}/handoff: the merged packet the next session reads. */
export const GET = apiRoute<{ key: string }>("packets:read", async ({ params }) => {
  const { packetId, body } = await getMergedHandoff(params.key);
  return jsonResponse(body, 200, { "baton-packet-id": packetId });
});
