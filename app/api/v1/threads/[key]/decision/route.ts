import { decide, decisionRequestSchema } from "@/lib/human/actions";
import { readJsonBody } from "@/lib/http/body";
import { jsonResponse } from "@/lib/http/respond";
import { personRoute } from "@/lib/http/route";

/**
 * POST /api/v1/threads/{key}/decision (operator): approve, or intervene with a
 * question for the next session. Based on {packet_id, base_revision}; 409 with
 * the current state when either moved on.
 */
export const POST = personRoute<{ key: string }>("operator", async ({ request, params, person }) =>
  jsonResponse(await decide(person, params.key, await readJsonBody(request, decisionRequestSchema, "decision"))),
);
