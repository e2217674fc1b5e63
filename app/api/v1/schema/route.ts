import { packetJsonSchema } from "@/lib/packet/json-schema";
import { assertAllowedHost } from "@/lib/http/host-check";
import { errorResponse, jsonResponse } from "@/lib/http/respond";

/** GET /api/v1/schema: the packet's JSON Schema, generated from the zod schema. Public. */
export function GET(request: Request): Response {
  try {
    assertAllowedHost(request);
  } catch (error) {
    return errorResponse(error);
  }
  return jsonResponse(packetJsonSchema(), 200, { "cache-control": "public, max-age=300" });
}
