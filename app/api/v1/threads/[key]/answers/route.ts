import { answer, answersRequestSchema } from "@/lib/human/actions";
import { readJsonBody } from "@/lib/http/body";
import { jsonResponse } from "@/lib/http/respond";
import { personRoute } from "@/lib/http/route";

/** POST /api/v1/threads/{key}/answers (operator): answers to the agent's questions_for_human, one revision. */
export const POST = personRoute<{ key: string }>("operator", async ({ request, params, person }) =>
  jsonResponse(await answer(person, params.key, await readJsonBody(request, answersRequestSchema, "answers"))),
);
