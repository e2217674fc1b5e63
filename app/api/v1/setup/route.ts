import { z } from "zod";
import { assertSameOrigin } from "@/lib/auth/person";
import { startSession } from "@/lib/auth/sessions";
import { createFirstAdmin } from "@/lib/auth/users";
import { readJsonBody } from "@/lib/http/body";
import { errorResponse } from "@/lib/http/respond";
import { signedInResponse } from "@/lib/http/session-response";

const setupSchema = z.strictObject({ username: z.string({ error: "username must be a string" }), password: z.string({ error: "password must be a string" }) });

/** POST /api/v1/setup: the first visit to a fresh install creates the admin and signs them in (409 once anyone exists). */
export async function POST(request: Request): Promise<Response> {
  try {
    assertSameOrigin(request);
    const body = await readJsonBody(request, setupSchema);
    const admin = await createFirstAdmin(body);
    return signedInResponse(request, await startSession(admin, "setup"), 201);
  } catch (error) {
    return errorResponse(error);
  }
}
