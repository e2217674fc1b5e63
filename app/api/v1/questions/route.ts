import { inboxDto } from "@/lib/views/questions/dto";
import { listOpenQuestions } from "@/lib/views/questions/inbox";
import { defineRoute } from "@/lib/http/route";

export const GET = defineRoute({
  method: "GET",
  path: "/api/v1/questions",
  summary: "The questions inbox: unanswered agent questions grouped, blocking first, then oldest.",
  auth: { kind: "reader" },
  response: { kind: "json", status: 200, schema: inboxDto },
  handler: () => listOpenQuestions(),
});
