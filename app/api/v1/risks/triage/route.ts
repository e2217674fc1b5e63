import { defineRoute } from "@/lib/http/route";
import { triageResultDto } from "@/lib/views/risks/dto";
import { triageRequestSchema, triageRisks } from "@/lib/views/risks/triage";

export const POST = defineRoute({
  method: "POST",
  path: "/api/v1/risks/triage",
  summary: "Acknowledges, resolves, snoozes or untriages risks by {thread_key, fingerprint}, all in one transaction; answers each target's state now.",
  auth: { kind: "person", role: "operator" },
  body: { schema: triageRequestSchema, name: "triage" },
  response: { kind: "json", status: 200, schema: triageResultDto },
  errors: ["not_found"],
  handler: ({ person, body }) => triageRisks(person, body),
});
