import { BatonError } from "@/lib/errors";
import { assertAllowedHost } from "@/lib/http/host-check";
import { errorResponse } from "@/lib/http/respond";

/** Any path under /api that no route serves: the API's error body, not an HTML page. */
function notFound(request: Request): Response {
  try {
    assertAllowedHost(request);
  } catch (error) {
    return errorResponse(error);
  }
  const path = new URL(request.url).pathname;
  return errorResponse(new BatonError("not_found", `No API route at ${path}; see README.md for the endpoints.`));
}

export const GET = notFound;
export const POST = notFound;
export const PUT = notFound;
export const PATCH = notFound;
export const DELETE = notFound;
