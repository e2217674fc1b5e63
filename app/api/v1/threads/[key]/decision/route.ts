import { z } from "zod";
import { humanStateDto } from "@/lib/human/dto";
import { decide, decisionRequestSchema } from "@/lib/human/actions";
import { defineRoute } from "@/lib/http/route";

export const POST = defineRoute({
  method: "POST",
  path: "/api/v1/threads/{key}/decision",
  summary: "Approves, or intervenes with a question for the next session; based on {packet_id, base_revision}, 409 with the current state when either moved on.",
  auth: { kind: "person", role: "operator" },
  params: z.object({ key: z.string() }),
  body: { schema: decisionRequestSchema, name: "decision" },
  response: { kind: "json", status: 200, schema: humanStateDto },
  errors: ["not_found", "conflict"],
  handler: ({ person, params, body }) => decide(person, params.key, body),
});
