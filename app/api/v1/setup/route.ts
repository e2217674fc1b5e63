import { z } from "zod";
import { signedInSchema } from "@/lib/auth/dto";
import { startSession } from "@/lib/auth/sessions";
import { assertSetupAllowed, forgetSetupCode } from "@/lib/auth/setup-code";
import { createFirstAdmin } from "@/lib/auth/users";
import { defineRoute } from "@/lib/http/route";
import { signedInReply } from "@/lib/http/session-response";

const setupSchema = z.strictObject({
  username: z.string({ error: "username must be a string" }),
  password: z.string({ error: "password must be a string" }),
  code: z.string({ error: "code must be a string" }).max(200, { error: "code is at most 200 characters" }).optional(),
});

export const POST = defineRoute({
  method: "POST",
  path: "/api/v1/setup",
  summary: "On a fresh install, creates the first admin and signs them in; only from loopback or with the one-time code printed at start.",
  auth: { kind: "public", fromPages: true },
  body: { schema: setupSchema, name: "request body" },
  response: { kind: "json", status: 201, schema: signedInSchema, description: "the admin, signed in; the session cookie is set" },
  errors: ["forbidden", "conflict"],
  handler: async ({ request, body }) => {
    const { code, ...account } = body;
    assertSetupAllowed(request, code);
    const admin = await createFirstAdmin(account);
    // Setup is closed now: the code never works again, whoever used it.
    forgetSetupCode();
    return signedInReply(request, await startSession(admin, "setup"), 201);
  },
});
