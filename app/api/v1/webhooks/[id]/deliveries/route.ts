import { z } from "zod";
import { defineRoute } from "@/lib/http/route";
import { deliveryPageDto, deliveryPageQuerySchema } from "@/lib/notify/dto";
import { listDeliveries } from "@/lib/notify/webhooks";

export const GET = defineRoute({
  method: "GET",
  path: "/api/v1/webhooks/{id}/deliveries",
  summary: "The webhook's delivery log, newest first; `before=<next_before>` fetches the older page.",
  auth: { kind: "person", role: "admin" },
  params: z.object({ id: z.string() }),
  query: deliveryPageQuerySchema,
  response: { kind: "json", status: 200, schema: deliveryPageDto },
  errors: ["not_found"],
  handler: ({ params, query }) => listDeliveries(params.id, query),
});
