import { z } from "zod";
import { defineRoute } from "@/lib/http/route";
import { integrationDto } from "@/lib/integrations/dto";
import { deleteIntegration } from "@/lib/integrations/integrations";

export const DELETE = defineRoute({
  method: "DELETE",
  path: "/api/v1/integrations/{id}",
  summary: "Removes an integration: its later deliveries are refused; the ones received stay.",
  auth: { kind: "person", role: "admin" },
  params: z.object({ id: z.string() }),
  response: { kind: "json", status: 200, schema: integrationDto },
  errors: ["not_found"],
  handler: ({ person, params }) => deleteIntegration(person.username, params.id),
});
