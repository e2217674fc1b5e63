import { NextResponse, type NextRequest } from "next/server";
import { SESSION_COOKIE } from "./lib/auth/session-cookie";

/**
 * A path segment with a broken percent-escape (`/api/v1/threads/%ZZ`) makes
 * Next fail while decoding route parameters, before any handler runs, with a
 * plain-text 500. Answer such requests here with the API's error body instead.
 */
export function proxy(request: NextRequest): NextResponse {
  try {
    decodeURIComponent(request.nextUrl.pathname);
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
  // Pages without any session cookie go straight to sign-in. Only a first line of
  // defence: every page checks the session itself (lib/auth/page-person.ts). A request
  // with a token, and the thread downloads (which answer 401 themselves), are let through.
  const { pathname } = request.nextUrl;
  const credentials = request.cookies.has(SESSION_COOKIE) || request.headers.has("authorization");
  const download = /\/handoff\.(json|md)$/.test(pathname);
  if (!pathname.startsWith("/api/") && !download && !credentials) {
    const signIn = new URL("/sign-in", request.url);
    signIn.searchParams.set("next", request.nextUrl.pathname + request.nextUrl.search);
    return NextResponse.redirect(signIn);
  }
  return NextResponse.next();
}

export const config = {
  // API routes with path parameters, and pages (not sign-in, first-run or static files);
  // the ingest endpoint stays free of this hop.
  matcher: ["/api/v1/threads/:path+", "/api/v1/packets/:path+", "/((?!api/|_next/|sign-in|setup|icon\\.svg|favicon\\.ico).*)"],
};
