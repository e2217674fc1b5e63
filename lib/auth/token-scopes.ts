import { z } from "zod";

/**
 * Scopes an API token can carry. Its own module, free of server code, so that
 * the browser's token form can list them (lib/auth/tokens.ts re-exports them).
 */
export const TOKEN_SCOPES = ["packets:write", "packets:read", "events:write"] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];
export const tokenScopeSchema = z.enum(TOKEN_SCOPES);
