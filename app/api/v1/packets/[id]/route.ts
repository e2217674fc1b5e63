import { apiRoute } from "@/lib/http/route";
import { jsonResponse } from "@/lib/http/respond";
import { getPacket } from "@/lib/threads/queries";

/** GET /api/v1/packets/{id}: one stored version, as received and canonical. */
export const GET = apiRoute<{ id: string }>("packets:read", async ({ params }) => jsonResponse(await getPacket(params.id)));
