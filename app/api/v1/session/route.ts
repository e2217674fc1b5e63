import { z } from "zod";
import { cookieOf, servedOverHttps } from "@/lib/auth/person";
import { sessionDtoSchema, signedInSchema } from "@/lib/auth/dto";
import { abilitiesOf } from "@/lib/auth/roles";
import { clearedSessionCookie, endSession, SESSION_COOKIE, signIn } from "@/lib/auth/sessions";
import { config } from "@/lib/server/config";
import { clientAddressOf } from "@/lib/http/client-address";
import { defineRoute, reply } from "@/lib/http/route";
import { signedInReply } from "@/lib/http/session-response";

const signInSchema = z.strictObject({ username: z.string({ error: "username must be a string" }), password: z.string({ error: "password must be a string" }) });

/**
 * The address sign-in is throttled by (decision 029). With none at all (no socket
 * address stamped and no X-Forwarded-For: not a request Next's server received),
 * one shared key: never reached behind Next's own server.
 */
function signInAddressOf(request: Request): string {
  return clientAddressOf(request, config().BATON_TRUSTED_PROXY_HOPS) ?? "unknown";
}

export const GET = defineRoute({
  method: "GET",
  path: "/api/v1/session",
  summary: "Who is signed in, and what they may do.",
  auth: { kind: "person", role: "viewer" },
  response: { kind: "json", status: 200, schema: sessionDtoSchema },
  handler: ({ person }) => ({ user: person, can: abilitiesOf(person.role) }),
});

export const POST = defineRoute({
  method: "POST",
  path: "/api/v1/session",
  summary: "Signs in with a username and password (a new session id every time; throttled, see docs/http-api.md#sign-in-throttling).",
  auth: { kind: "public", fromPages: true },
  body: { schema: signInSchema, name: "request body" },
  response: { kind: "json", status: 200, schema: signedInSchema, description: "who signed in; the session cookie is set" },
  errors: ["unauthenticated", "rate_limited"],
  handler: async ({ request, body }) => signedInReply(request, await signIn(body, signInAddressOf(request))),
});

export const DELETE = defineRoute({
  method: "DELETE",
  path: "/api/v1/session",
  summary: "Signs out, ending the session on the server.",
  auth: { kind: "public", fromPages: true },
  response: { kind: "empty", status: 204 },
  handler: async ({ request }) => {
    await endSession(cookieOf(request, SESSION_COOKIE));
    return reply(null, { headers: { "set-cookie": clearedSessionCookie(servedOverHttps(request)) } });
  },
});
