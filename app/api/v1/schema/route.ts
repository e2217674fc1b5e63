import { packetJsonSchema } from "@/lib/packet/json-schema";
import { jsonResponse } from "@/lib/http/respond";

/** GET /api/v1/schema: the packet's JSON Schema, generated from the zod schema. Public. */
export function GET(): Response {
  return jsonResponse(packetJsonSchema(), 200, { "cache-control": "public, max-age=300" });
}
