import { z } from "zod";
import { createApiToken, listApiTokens, tokenScopeSchema } from "@/lib/auth/tokens";
import { readJsonBody } from "@/lib/http/body";
import { jsonResponse } from "@/lib/http/respond";
import { personRoute } from "@/lib/http/route";

const newTokenSchema = z.strictObject({
  name: z.string({ error: "name must be a string" }),
  scopes: z.array(tokenScopeSchema, { error: "scopes must be a list of packets:write, packets:read, events:write" }),
});

/** GET /api/v1/tokens (admin): every token as prefix...last4, scopes, last used; never a secret. */
export const GET = personRoute("admin", async () => jsonResponse({ tokens: await listApiTokens() }));

/** POST /api/v1/tokens (admin): creates a token; the answer holds the secret, the only time it is shown. */
export const POST = personRoute("admin", async ({ request, person }) => {
  const body = await readJsonBody(request, newTokenSchema, "token");
  const { token, summary } = await createApiToken(body.name, body.scopes, person.username);
  return jsonResponse({ token, summary }, 201);
});
