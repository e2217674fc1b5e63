import { NextResponse, type NextRequest } from "next/server";

/**
 * A path segment with a broken percent-escape (`/api/v1/threads/%ZZ`) makes
 * Next fail while decoding route parameters, before any handler runs, with a
 * plain-text 500. Answer such requests here with the API's error body instead.
 */
export function proxy(request: NextRequest): NextResponse {
  try {
    decodeURIComponent(request.nextUrl.pathname);
    return NextResponse.next();
  } catch {
    return NextResponse.json(
      {
        error: {
          code: "invalid_request",
          message: "The URL has a malformed percent-escape; encode path segments with encodeURIComponent.",
          details: null,
        },
      },
      { status: 400 },
    );
  }
}

export const config = {
  // Only routes with path parameters; the ingest endpoint stays free of this hop.
  matcher: ["/api/v1/threads/:path+", "/api/v1/packets/:path+", "/threads/:path*"],
};
