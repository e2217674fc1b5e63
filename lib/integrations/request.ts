import "server-only";
import { z } from "zod";
import { PACKET_MAX_BYTES } from "../contract/schema";
import { readBodyBytes } from "../http/body";
import type { CodeHost, DeliveryAnswerDto } from "./dto";
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
