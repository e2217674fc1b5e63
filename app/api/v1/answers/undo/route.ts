import { answerUndoResultDto } from "@/lib/human/dto";
import { answerUndoRequestSchema, undoAnswers } from "@/lib/human/undo";
import { defineRoute } from "@/lib/http/route";

export const POST = defineRoute({
  method: "POST",
  path: "/api/v1/answers/undo",
  summary: "Takes back answers you just sent, thread by thread: each one whose human section has not moved on since gets a new revision without them.",
  auth: { kind: "person", role: "operator" },
  body: { schema: answerUndoRequestSchema, name: "undo" },
  response: { kind: "json", status: 200, schema: answerUndoResultDto },
  errors: ["not_found", "forbidden"],
  handler: async ({ person, body }) => undoAnswers(person, body),
});
