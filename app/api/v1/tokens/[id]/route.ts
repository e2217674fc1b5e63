import { z } from "zod";
import { tokenSummarySchema } from "@/lib/auth/dto";
import { revokeApiToken } from "@/lib/auth/tokens";
import { defineRoute } from "@/lib/http/route";

export const DELETE = defineRoute({
  method: "DELETE",
  path: "/api/v1/tokens/{id}",
  summary: "Revokes a token; the next request with it is refused. Answers the token as it is now.",
  auth: { kind: "person", role: "admin" },
  params: z.object({ id: z.string() }),
  response: { kind: "json", status: 200, schema: tokenSummarySchema },
  errors: ["not_found"],
  handler: ({ params, person }) => revokeApiToken(params.id, person.username),
});
