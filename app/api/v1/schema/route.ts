import { z } from "zod";
import { defineRoute, reply } from "@/lib/http/route";
import { packetJsonSchema } from "@/lib/contract/json-schema";

export const GET = defineRoute({
  method: "GET",
  path: "/api/v1/schema",
  summary: "The packet's JSON Schema (draft 2020-12), generated from the zod schema; docs/packet.schema.json holds the same.",
  auth: { kind: "public" },
  response: { kind: "json", status: 200, schema: z.record(z.string(), z.unknown()) },
  handler: () => reply(packetJsonSchema(), { headers: { "cache-control": "public, max-age=300" } }),
});
