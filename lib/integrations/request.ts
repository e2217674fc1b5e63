import "server-only";
import { z } from "zod";
import { PACKET_MAX_BYTES } from "../contract/schema";
import { readBodyBytes } from "../http/body";
import { defineRoute } from "../http/route";
import { deliveryAnswerDto, type CodeHost, type DeliveryAnswerDto } from "./dto";
import { receiveDelivery } from "./receive";

/** A delivery's body is at most what a packet may be: the hosts' pull request payloads are tens of KiB. */
export const DELIVERY_MAX_BYTES = PACKET_MAX_BYTES;

export const deliveryQuerySchema = z.object({
  integration: z.string({ error: "integration must name the integration (its id, from the endpoint Baton gave)" }).min(1).max(100),
});

/** The route's side: the raw bytes (read before any parsing, within the body limits), then receiveDelivery. */
export async function receiveDeliveryRequest(host: CodeHost, request: Request, integrationId: string): Promise<DeliveryAnswerDto> {
  const { buffer } = await readBodyBytes(request, DELIVERY_MAX_BYTES);
  return receiveDelivery({ host, integrationId, headers: request.headers, body: buffer });
}

/** The receiver route of one code host: only its name and the headers it signs with differ. */
export function deliveryRoute(host: CodeHost, hostName: string, headers: Record<string, string>) {
  return defineRoute({
    method: "POST",
    path: `/api/v1/integrations/${host}`,
    summary: `Receives a signed ${hostName} webhook delivery and attaches it to the active threads of its repository (project) and branch.`,
    auth: { kind: "public" },
    query: deliveryQuerySchema,
    headers,
    body: { raw: `the ${hostName} webhook payload, as sent (the signature is checked on these bytes)` },
    response: {
      kind: "json",
      status: 200,
      schema: deliveryAnswerDto,
      description:
        "`applied` with the threads it changed, `unmatched` (kept, shown on the integrations page), `duplicate` (a delivery id already received: nothing changed) or `ignored` (an event Baton does not read)",
    },
    errors: ["unauthenticated", "invalid_json", "invalid_request", "conflict", "payload_too_large", "request_timeout"],
    handler: ({ request, query }) => receiveDeliveryRequest(host, request, query.integration),
  });
}
