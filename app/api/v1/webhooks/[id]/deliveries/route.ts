import { jsonResponse } from "@/lib/http/respond";
import { personRoute } from "@/lib/http/route";
import { listDeliveries } from "@/lib/webhooks/webhooks";

/** GET /api/v1/webhooks/{id}/deliveries?limit=50&before=<next_before> (admin): the delivery log, newest first. */
export const GET = personRoute<{ id: string }>("admin", async ({ request, params }) =>
  jsonResponse(await listDeliveries(params.id, Object.fromEntries(new URL(request.url).searchParams))),
);
