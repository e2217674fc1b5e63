import "server-only";
import type { StartedSession } from "../auth/sessions";
import { sessionCookie } from "../auth/sessions";
import { servedOverHttps } from "../auth/person";
import { jsonResponse } from "./respond";

/** The answer to a sign-in or first-run: who signed in, and the session cookie. */
export function signedInResponse(request: Request, session: StartedSession, status = 200): Response {
  return jsonResponse({ user: session.person }, status, {
    "set-cookie": sessionCookie(session.secret, session.expiresAt, servedOverHttps(request)),
  });
}
