import { z } from "zod";
import { assertSameOrigin } from "@/lib/auth/person";
import { startSession } from "@/lib/auth/sessions";
import { assertSetupAllowed, forgetSetupCode } from "@/lib/auth/setup-code";
import { createFirstAdmin } from "@/lib/auth/users";
import { readJsonBody } from "@/lib/http/body";
import { assertAllowedHost } from "@/lib/http/host-check";
import { errorResponse } from "@/lib/http/respond";
import { signedInResponse } from "@/lib/http/session-response";

const setupSchema = z.strictObject({
  username: z.string({ error: "username must be a string" }),
  password: z.string({ error: "password must be a string" }),
  code: z.string({ error: "code must be a string" }).max(200, { error: "code is at most 200 characters" }).optional(),
});

/**
 * POST /api/v1/setup: the first visit to a fresh install creates the admin and
 * signs them in (409 once anyone exists). Only from loopback or with the
 * one-time code printed at start (403 otherwise; lib/auth/setup-code.ts).
 */
export async function POST(request: Request): Promise<Response> {
  try {
    assertAllowedHost(request);
    assertSameOrigin(request);
    const { code, ...account } = await readJsonBody(request, setupSchema);
    assertSetupAllowed(request, code);
    const admin = await createFirstAdmin(account);
    // Setup is closed now: the code never works again, whoever used it.
    forgetSetupCode();
    return signedInResponse(request, await startSession(admin, "setup"), 201);
  } catch (error) {
    return errorResponse(error);
  }
}
