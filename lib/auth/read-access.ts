import "server-only";
import { authenticateBearer, type AuthenticatedToken } from "./tokens";
import { BatonError } from "../core/errors";
import { admitTokenRequest } from "../http/rate-limit";
import { personOfRequest } from "./person";
import type { Person } from "./roles";

/** Who is reading the board's data. */
export type Reader = { kind: "token"; token: AuthenticatedToken } | { kind: "person"; person: Person };

/**
 * THE one place that decides who may read the board's data (the board API, the
 * live stream, threads, packets, downloads): an API token with the scope
 * packets:read, or a signed-in person of any role. A bad or revoked token is
 * refused whatever else is sent; a token over its rate limit gets 429
 * (lib/http/rate-limit.ts), a person never does.
 */
export async function authoriseRead(request: Request): Promise<Reader> {
  const authorization = request.headers.get("authorization");
  if (authorization) {
    const token = await authenticateBearer(authorization, "packets:read");
    // Tokens are rate-limited (429 with Retry-After); people are not.
    admitTokenRequest(token);
    return { kind: "token", token };
  }
  const person = await personOfRequest(request);
  if (person) return { kind: "person", person };
  throw new BatonError(
    "unauthenticated",
    "Sign in to Baton, or send an API token with the scope packets:read as `Authorization: Bearer <token>` (create one with `baton token create`).",
  );
}
