import { readRoute } from "@/lib/http/route";
import { jsonResponse } from "@/lib/http/respond";
import { getPacket } from "@/lib/threads/queries";

/** GET /api/v1/packets/{id}: one stored version, as received and canonical. */
export const GET = readRoute<{ id: string }>(async ({ params }) => jsonResponse(await getPacket(params.id)));
