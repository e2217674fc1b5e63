import { readJsonBody } from "@/lib/http/body";
import { jsonResponse } from "@/lib/http/respond";
import { personRoute } from "@/lib/http/route";
import { triageRequestSchema, triageRisks } from "@/lib/risks/triage";

/**
 * POST /api/v1/risks/triage (operator): acknowledge, resolve, snooze or untriage
 * risks by {thread_key, fingerprint}, all in one transaction; answers with each
 * target's state now.
 */
export const POST = personRoute("operator", async ({ request, person }) =>
  jsonResponse(await triageRisks(person, await readJsonBody(request, triageRequestSchema, "triage"))),
);
