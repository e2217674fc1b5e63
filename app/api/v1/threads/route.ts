import { defineRoute } from "@/lib/http/route";
import { threadListDto } from "@/lib/views/threads/dto";
import { threadListQuerySchema } from "@/lib/views/threads/filters";
import { listThreads } from "@/lib/views/threads/flagged";

export const GET = defineRoute({
  method: "GET",
  path: "/api/v1/threads",
  summary: "Active threads with a card summary; filters and cursor pagination (`next_cursor`).",
  auth: { kind: "reader" },
  query: threadListQuerySchema,
  response: { kind: "json", status: 200, schema: threadListDto },
  handler: ({ query }) => listThreads(query),
});
