import { authenticateBearer, type AuthenticatedToken, type TokenScope } from "../auth/tokens";
import { errorResponse } from "./respond";

interface RouteContext<Params> {
  request: Request;
  params: Params;
  token: AuthenticatedToken;
}

/**
 * Wraps an agents' API handler: authenticates the bearer token for `scope`,
 * runs the handler, and turns any error into the one error body.
 */
export function apiRoute<Params = Record<string, never>>(
  scope: TokenScope,
  handler: (context: RouteContext<Params>) => Promise<Response>,
) {
  return async (request: Request, segment: { params: Promise<Params> }): Promise<Response> => {
    try {
      const token = await authenticateBearer(request.headers.get("authorization"), scope);
      return await handler({ request, params: await segment.params, token });
    } catch (error) {
      return errorResponse(error);
    }
  };
}
