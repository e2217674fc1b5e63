import { z } from "zod";
import { isoTime } from "../core/iso-time";
import { roleSchema } from "./roles";
import { tokenScopeSchema } from "./token-scopes";

/**
 * The shapes of people and tokens as the API sends them. Free of server code:
 * the browser checks answers with these, the server builds its answers with them
 * (lib/auth/users.ts, lib/auth/tokens.ts).
 */

/** Someone who can sign in, as the admin pages list them. */
export const userDtoSchema = z.object({
  id: z.string(),
  username: z.string(),
  role: roleSchema,
  created_at: isoTime,
  disabled: z.boolean(),
});
export type UserDto = z.infer<typeof userDtoSchema>;

/** An API token as listed: never its secret, only `prefix...last4`. */
export const tokenSummarySchema = z.object({
  id: z.string(),
  name: z.string(),
  display: z.string(),
  scopes: z.array(tokenScopeSchema),
  /** The project the token is bound to (its packets take it; it writes only that project's threads), or null. */
  project: z.string().nullable(),
  created_at: isoTime,
  last_used_at: isoTime.nullable(),
  revoked_at: isoTime.nullable(),
});
export type TokenSummary = z.infer<typeof tokenSummarySchema>;

/** Who signed in: the answer to sign-in and to first-run. */
export const signedInSchema = z.object({
  user: z.object({ id: z.string(), username: z.string(), role: roleSchema }),
});

/** GET /api/v1/session: who is signed in, and what the pages may offer them (lib/auth/roles.ts abilitiesOf). */
export const sessionDtoSchema = signedInSchema.extend({
  can: z.object({ act: z.boolean(), administer: z.boolean() }),
});

/** GET /api/v1/users. */
export const userListSchema = z.object({ users: z.array(userDtoSchema) });

/** GET /api/v1/tokens. */
export const tokenListSchema = z.object({ tokens: z.array(tokenSummarySchema) });

/** POST /api/v1/tokens: the secret, the only time it is sent, and its summary. */
export const createdTokenSchema = z.object({ token: z.string(), summary: tokenSummarySchema });
