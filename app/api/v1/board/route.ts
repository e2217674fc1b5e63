import { loadBoard } from "@/lib/board/board";
import { boardDto } from "@/lib/board/dto";
import { defineRoute } from "@/lib/http/route";
import { threadFiltersSchema } from "@/lib/views/threads/filters";

export const GET = defineRoute({
  method: "GET",
  path: "/api/v1/board",
  summary: "Every active thread placed in its column, with counts; the board's filters.",
  auth: { kind: "reader" },
  query: threadFiltersSchema,
  response: { kind: "json", status: 200, schema: boardDto },
  handler: ({ query }) => loadBoard(query),
});
