import { defineRoute } from "@/lib/http/route";
import { timelineDto } from "@/lib/views/timeline/dto";
import { loadTimeline, timelineQuerySchema } from "@/lib/views/timeline/queries";

export const GET = defineRoute({
  method: "GET",
  path: "/api/v1/timeline",
  summary: "One lane per matching thread with its versions, decisions and session reports in the window, and the first page of their ledger feed.",
  auth: { kind: "reader" },
  query: timelineQuerySchema,
  response: { kind: "json", status: 200, schema: timelineDto },
  handler: ({ query }) => loadTimeline(query),
});
