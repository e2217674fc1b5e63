import { answerShared, sharedAnswerRequestSchema } from "@/lib/human/actions";
import { readJsonBody } from "@/lib/http/body";
import { jsonResponse } from "@/lib/http/respond";
import { personRoute } from "@/lib/http/route";

/** POST /api/v1/answers (operator): one answer for the same question in several threads, all or none. */
export const POST = personRoute("operator", async ({ request, person }) =>
  jsonResponse({ written: await answerShared(person, await readJsonBody(request, sharedAnswerRequestSchema, "answer")) }),
);
