import { defineRoute } from "@/lib/http/route";
import { deliveryAnswerDto } from "@/lib/integrations/dto";
import { deliveryQuerySchema, receiveDeliveryRequest } from "@/lib/integrations/request";

export const POST = defineRoute({
  method: "POST",
  path: "/api/v1/integrations/gitlab",
  summary: "Receives a signed GitLab webhook delivery and attaches it to the active threads of its repository (project) and branch.",
  auth: { kind: "public" },
  query: deliveryQuerySchema,
  headers: {
    "X-Gitlab-Token": "the integration's secret",
    "X-Gitlab-Event-UUID": "the delivery id (or Idempotency-Key); a second delivery with the same id changes nothing",
    "X-Gitlab-Event": "Merge Request Hook, Pipeline Hook or Note Hook (others are ignored)",
  },
  body: { raw: "the GitLab webhook payload, as sent (the signature is checked on these bytes)" },
  response: {
    kind: "json",
    status: 200,
    schema: deliveryAnswerDto,
    description: "`applied` with the threads it changed, `unmatched` (kept, shown on the integrations page), `duplicate` (a delivery id already received: nothing changed) or `ignored` (an event Baton does not read)",
  },
  errors: ["unauthenticated", "invalid_json", "invalid_request", "conflict", "payload_too_large", "request_timeout"],
  handler: ({ request, query }) => receiveDeliveryRequest("gitlab", request, query.integration),
});
