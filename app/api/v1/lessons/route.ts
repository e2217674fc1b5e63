import { defineRoute } from "@/lib/http/route";
import { lessonsDto } from "@/lib/views/lessons/dto";
import { lessonsQuerySchema, listLessons } from "@/lib/views/lessons/queries";

export const GET = defineRoute({
  method: "GET",
  path: "/api/v1/lessons",
  summary: "Failed attempts that repeat across versions and threads in the last 30 days, newest first.",
  auth: { kind: "reader" },
  query: lessonsQuerySchema,
  response: { kind: "json", status: 200, schema: lessonsDto },
  handler: ({ query }) => listLessons(query),
});
