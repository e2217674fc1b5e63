import { defineRoute } from "@/lib/http/route";
import { createdIntegrationDto, integrationListDto, newIntegrationSchema } from "@/lib/integrations/dto";
import { createIntegration, listIntegrations } from "@/lib/integrations/integrations";

export const GET = defineRoute({
  method: "GET",
  path: "/api/v1/integrations",
  summary: "Every code host integration (secrets only as ••••last4) and the latest deliveries no active thread matched.",
  auth: { kind: "person", role: "admin" },
  response: { kind: "json", status: 200, schema: integrationListDto },
  handler: () => listIntegrations(),
});

export const POST = defineRoute({
  method: "POST",
  path: "/api/v1/integrations",
  summary: "Creates a GitHub or GitLab integration; the answer's `secret` (for the code host's webhook settings) is the only time it is shown.",
  auth: { kind: "person", role: "admin" },
  body: { schema: newIntegrationSchema, name: "integration" },
  response: { kind: "json", status: 201, schema: createdIntegrationDto },
  handler: ({ person, body }) => createIntegration(person.username, body),
});
