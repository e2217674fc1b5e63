import { z } from "zod";
import { humanStateDto } from "@/lib/human/dto";
import { answer, answersRequestSchema } from "@/lib/human/actions";
import { defineRoute } from "@/lib/http/route";

export const POST = defineRoute({
  method: "POST",
  path: "/api/v1/threads/{key}/answers",
  summary: "Answers to the agent's questions_for_human, as one revision of the human section; 409 with the current state when the packet or revision moved on.",
  auth: { kind: "person", role: "operator" },
  params: z.object({ key: z.string() }),
  body: { schema: answersRequestSchema, name: "answers" },
  response: { kind: "json", status: 200, schema: humanStateDto },
  errors: ["not_found", "conflict"],
  handler: ({ person, params, body }) => answer(person, params.key, body),
});
