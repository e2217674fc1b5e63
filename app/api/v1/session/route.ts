import { z } from "zod";
import { assertSameOrigin, cookieOf, personOfRequest, servedOverHttps } from "@/lib/auth/person";
import { abilitiesOf } from "@/lib/auth/roles";
import { clearedSessionCookie, endSession, SESSION_COOKIE, signIn } from "@/lib/auth/sessions";
import { assertAllowedHost } from "@/lib/http/host-check";
import { readJsonBody } from "@/lib/http/body";
import { errorResponse, jsonResponse } from "@/lib/http/respond";
import { signedInResponse } from "@/lib/http/session-response";
import { config } from "@/lib/config";
import { BatonError } from "@/lib/errors";
import { clientAddressOf } from "@/lib/http/client-address";

const signInSchema = z.strictObject({ username: z.string({ error: "username must be a string" }), password: z.string({ error: "password must be a string" }) });

/**
 * The address sign-in is throttled by (decision 029). With none at all (no socket
 * address stamped and no X-Forwarded-For: not a request Next's server received),
 * one shared key: never reached behind Next's own server.
 */
function signInAddressOf(request: Request): string {
  return clientAddressOf(request, config().BATON_TRUSTED_PROXY_HOPS) ?? "unknown";
}

/** GET /api/v1/session: who is signed in (401 when nobody). */
export async function GET(request: Request): Promise<Response> {
  try {
    assertAllowedHost(request);
    const person = await personOfRequest(request);
    if (!person) throw new BatonError("unauthenticated", "Nobody is signed in.");
    return jsonResponse({ user: person, can: abilitiesOf(person.role) });
  } catch (error) {
    return errorResponse(error);
  }
}

/** POST /api/v1/session: signs in with a username and password; a new session id every time. */
export async function POST(request: Request): Promise<Response> {
  try {
    assertAllowedHost(request);
    assertSameOrigin(request);
    const body = await readJsonBody(request, signInSchema);
    return signedInResponse(request, await signIn(body, signInAddressOf(request)));
  } catch (error) {
    return errorResponse(error);
  }
}

/** DELETE /api/v1/session: signs out, ending the session on the server. */
export async function DELETE(request: Request): Promise<Response> {
  try {
    assertAllowedHost(request);
    assertSameOrigin(request);
    await endSession(cookieOf(request, SESSION_COOKIE));
    return new Response(null, { status: 204, headers: { "set-cookie": clearedSessionCookie(servedOverHttps(request)) } });
  } catch (error) {
    return errorResponse(error);
  }
}
