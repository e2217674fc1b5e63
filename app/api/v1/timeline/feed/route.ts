import { defineRoute } from "@/lib/http/route";
import { timelineFeedDto, timelineFeedQuerySchema } from "@/lib/views/timeline/dto";
import { listTimelineFeed } from "@/lib/views/timeline/feed";

export const GET = defineRoute({
  method: "GET",
  path: "/api/v1/timeline/feed",
  summary: "A page of the ledger of the timeline's threads, newest first, before the seq `before`.",
  auth: { kind: "reader" },
  query: timelineFeedQuerySchema,
  response: { kind: "json", status: 200, schema: timelineFeedDto },
  handler: ({ query }) => listTimelineFeed(query),
});
