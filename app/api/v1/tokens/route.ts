import { z } from "zod";
import { createdTokenSchema, tokenListSchema } from "@/lib/auth/dto";
import { createApiToken, listApiTokens, TOKEN_NAME_MAX, tokenScopeSchema } from "@/lib/auth/tokens";
import { displayNameSchema } from "@/lib/contract/display-name";
import { projectNameSchema } from "@/lib/contract/project-binding";
import { defineRoute } from "@/lib/http/route";

const newTokenSchema = z.strictObject({
  name: displayNameSchema("name", TOKEN_NAME_MAX),
  scopes: z.array(tokenScopeSchema, { error: "scopes must be a list of packets:write, packets:read, events:write" }),
  /** Binds the token to a project (docs/decisions/056-project-bound-tokens.md); absent or null: unbound. */
  project: projectNameSchema.nullish(),
});

export const GET = defineRoute({
  method: "GET",
  path: "/api/v1/tokens",
  summary: "Every token as prefix...last4, with scopes and last use; never a secret.",
  auth: { kind: "person", role: "admin" },
  response: { kind: "json", status: 200, schema: tokenListSchema },
  handler: async () => ({ tokens: await listApiTokens() }),
});

export const POST = defineRoute({
  method: "POST",
  path: "/api/v1/tokens",
  summary: "Creates a token; the answer holds its secret, the only time it is shown.",
  auth: { kind: "person", role: "admin" },
  body: { schema: newTokenSchema, name: "token" },
  response: { kind: "json", status: 201, schema: createdTokenSchema },
  handler: async ({ body, person }) => createApiToken(body.name, body.scopes, person.username, body.project ?? undefined),
});
