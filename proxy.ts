import { NextResponse, type NextRequest } from "next/server";
import { SESSION_COOKIE } from "./lib/auth/session-cookie";
import { hostRefusal, parseAllowedHosts, type AllowedHost } from "./lib/http/hosts";
import { createNonce, isThreadDownloadPath, NON_PAGE_CONTENT_SECURITY_POLICY, pageContentSecurityPolicy } from "./lib/http/security-headers";

/** Pages anyone may see without a session: sign-in, and first-run on a fresh install. */
const OPEN_PAGES = new Set(["/sign-in", "/setup"]);

/**
 * BATON_ALLOWED_HOSTS, read here without lib/server/config.ts (which brings zod and the webhook
 * checks into the proxy); the server checks the value at start and stops on a bad one.
 */
let allowedHosts: AllowedHost[] | undefined;
function batonAllowedHosts(): AllowedHost[] {
  if (allowedHosts) return allowedHosts;
  const entries = (process.env.BATON_ALLOWED_HOSTS ?? "").split(",").map((entry) => entry.trim()).filter(Boolean);
  const parsed = parseAllowedHosts(entries);
  if (!("hosts" in parsed)) throw new Error(`Baton's environment is not valid: BATON_ALLOWED_HOSTS: ${parsed.problem}`);
  allowedHosts = parsed.hosts;
  return allowedHosts;
}

/**
 * A path segment with a broken percent-escape (`/api/v1/threads/%ZZ`) makes
 * Next fail while decoding route parameters, before any handler runs, with a
 * plain-text 500. Answer such requests here with the API's error body instead.
 */
function malformedEscapeResponse(pathname: string): NextResponse | null {
  try {
    decodeURIComponent(pathname);
    return null;
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

/**
 * Renders the page with a fresh nonce: Next reads it from the request's
 * Content-Security-Policy and puts it on its own scripts; the browser gets the
 * same policy (decision 022).
 */
function withPagePolicy(request: NextRequest): NextResponse {
  const policy = pageContentSecurityPolicy(createNonce(), { development: process.env.NODE_ENV === "development" });
  const requestHeaders = new Headers(request.headers);
  requestHeaders.set("content-security-policy", policy);
  const response = NextResponse.next({ request: { headers: requestHeaders } });
  response.headers.set("content-security-policy", policy);
  return response;
}

export function proxy(request: NextRequest): NextResponse {
  const { pathname } = request.nextUrl;
  // DNS rebinding: a Host not in BATON_ALLOWED_HOSTS gets no page (decision 030); API routes check it again.
  const refusal = hostRefusal(request, batonAllowedHosts());
  if (refusal) {
    const refused = NextResponse.json(refusal.toBody(), { status: refusal.status });
    refused.headers.set("content-security-policy", NON_PAGE_CONTENT_SECURITY_POLICY);
    return refused;
  }
  const malformed = malformedEscapeResponse(pathname);
  if (malformed) return malformed;
  // API answers and downloads get their (static) headers from next.config.ts.
  if (pathname.startsWith("/api/") || isThreadDownloadPath(pathname)) return NextResponse.next();
  // Pages without any session cookie go straight to sign-in. Only a first line of
  // defence: every page checks the session itself (lib/auth/page-person.ts). A request
  // with a token is let through (the downloads above answer 401 themselves).
  const credentials = request.cookies.has(SESSION_COOKIE) || request.headers.has("authorization");
  if (!credentials && !OPEN_PAGES.has(pathname)) {
    const signIn = new URL("/sign-in", request.url);
    signIn.searchParams.set("next", pathname + request.nextUrl.search);
    const redirect = NextResponse.redirect(signIn);
    // A redirect is no page either: the strict policy (decision 022).
    redirect.headers.set("content-security-policy", NON_PAGE_CONTENT_SECURITY_POLICY);
    return redirect;
  }
  return withPagePolicy(request);
}

export const config = {
  // API routes with path parameters, and every page (sign-in and first-run included, for
  // their policy; not static files); the ingest endpoint stays free of this hop.
  matcher: ["/api/v1/threads/:path+", "/api/v1/packets/:path+", "/((?!api/|_next/|icon\\.svg|favicon\\.ico).*)"],
};
