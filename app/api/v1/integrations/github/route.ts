import { defineRoute } from "@/lib/http/route";
import { deliveryAnswerDto } from "@/lib/integrations/dto";
import { deliveryQuerySchema, receiveDeliveryRequest } from "@/lib/integrations/request";

export const POST = defineRoute({
  method: "POST",
  path: "/api/v1/integrations/github",
  summary: "Receives a signed GitHub webhook delivery and attaches it to the active threads of its repository (project) and branch.",
  auth: { kind: "public" },
  query: deliveryQuerySchema,
  headers: {
    "X-Hub-Signature-256": "sha256=<hex HMAC-SHA256 of the raw body with the integration's secret>",
    "X-GitHub-Delivery": "the delivery id; a second delivery with the same id changes nothing",
    "X-GitHub-Event": "pull_request, check_run, check_suite or pull_request_review (others are ignored)",
  },
  body: { raw: "the GitHub webhook payload, as sent (the signature is checked on these bytes)" },
  response: {
    kind: "json",
    status: 200,
    schema: deliveryAnswerDto,
    description: "`applied` with the threads it changed, `unmatched` (kept, shown on the integrations page), `duplicate` (a delivery id already received: nothing changed) or `ignored` (an event Baton does not read)",
  },
  errors: ["unauthenticated", "invalid_json", "invalid_request", "conflict", "payload_too_large", "request_timeout"],
  handler: ({ request, query }) => receiveDeliveryRequest("github", request, query.integration),
});
