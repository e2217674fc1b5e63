import "server-only";
import { requirePerson } from "../auth/person";
import type { Person, Role } from "../auth/roles";
import { authoriseRead, type Reader } from "../auth/read-access";
import { authenticateBearer, type AuthenticatedToken, type TokenScope } from "../auth/tokens";
import { assertAllowedHost } from "./host-check";
import { admitTokenRequest } from "./rate-limit";
import { errorResponse } from "./respond";

interface RouteContext<Params> {
  request: Request;
  params: Params;
  token: AuthenticatedToken;
}

/**
 * Wraps an agents' API handler: refuses a Host not in BATON_ALLOWED_HOSTS
 * (421, lib/http/host-check.ts; so do the other wrappers), authenticates the bearer token for `scope`,
 * counts the request against the token's rate limit (429 with Retry-After when
 * it is over, lib/http/rate-limit.ts), runs the handler, and turns any error
 * into the one error body. The handler runs only for an admitted request, so
 * a refused one never reads its body.
 */
export function apiRoute<Params = Record<string, never>>(
  scope: TokenScope,
  handler: (context: RouteContext<Params>) => Promise<Response>,
) {
  return async (request: Request, segment: { params: Promise<Params> }): Promise<Response> => {
    try {
      assertAllowedHost(request);
      const token = await authenticateBearer(request.headers.get("authorization"), scope);
      admitTokenRequest(token);
      return await handler({ request, params: await segment.params, token });
    } catch (error) {
      return errorResponse(error);
    }
  };
}

/**
 * Wraps a read handler: an API token with packets:read (rate-limited like
 * apiRoute), or a signed-in person (never rate-limited); lib/auth/read-access.ts.
 */
export function readRoute<Params = Record<string, never>>(
  handler: (context: { request: Request; params: Params; reader: Reader }) => Promise<Response>,
) {
  return async (request: Request, segment: { params: Promise<Params> }): Promise<Response> => {
    try {
      assertAllowedHost(request);
      const reader = await authoriseRead(request);
      return await handler({ request, params: await segment.params, reader });
    } catch (error) {
      return errorResponse(error);
    }
  };
}

/**
 * Wraps a human action's handler: from Baton's own pages, by a signed-in
 * person with at least `role` (lib/auth/person.ts), checked before anything else.
 */
export function personRoute<Params = Record<string, never>>(
  role: Role,
  handler: (context: { request: Request; params: Params; person: Person }) => Promise<Response>,
) {
  return async (request: Request, segment: { params: Promise<Params> }): Promise<Response> => {
    try {
      assertAllowedHost(request);
      const person = await requirePerson(request, role);
      return await handler({ request, params: await segment.params, person });
    } catch (error) {
      return errorResponse(error);
    }
  };
}
