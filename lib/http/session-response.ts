import "server-only";
import type { StartedSession } from "../auth/sessions";
import { sessionCookie } from "../auth/sessions";
import { servedOverHttps } from "../auth/person";
import { reply } from "./route";

/** The answer to a sign-in or first-run: who signed in, and the session cookie. */
export function signedInReply(request: Request, session: StartedSession, status = 200) {
  return reply(
    { user: session.person },
    { status, headers: { "set-cookie": sessionCookie(session.secret, session.expiresAt, servedOverHttps(request)) } },
  );
}
