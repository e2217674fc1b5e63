import { sharedAnswerResultDto } from "@/lib/human/dto";
import { answerShared, sharedAnswerRequestSchema } from "@/lib/human/actions";
import { defineRoute } from "@/lib/http/route";

export const POST = defineRoute({
  method: "POST",
  path: "/api/v1/answers",
  summary: "One answer for the same question in several threads, all or none.",
  auth: { kind: "person", role: "operator" },
  body: { schema: sharedAnswerRequestSchema, name: "answer" },
  response: { kind: "json", status: 200, schema: sharedAnswerResultDto },
  errors: ["not_found", "conflict"],
  handler: async ({ person, body }) => ({ written: await answerShared(person, body) }),
});
