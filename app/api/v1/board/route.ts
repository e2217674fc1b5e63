import { loadBoard } from "@/lib/board/board";
import { boardEtag } from "@/lib/board/board-etag";
import { boardDto } from "@/lib/board/dto";
import { defineRoute } from "@/lib/http/route";
import { threadFiltersSchema, type ThreadFilters } from "@/lib/views/threads/filters";

export const GET = defineRoute({
  method: "GET",
  path: "/api/v1/board",
  summary: "Every active thread placed in its column, with counts; the board's filters.",
  auth: { kind: "reader" },
  query: threadFiltersSchema,
  headers: { "If-None-Match": "optional: the ETag of the board you hold; 304 when the ledger has not moved since (and the clock not by 30 s)" },
  response: {
    kind: "json",
    status: 200,
    schema: boardDto,
    etag: ({ query, reader }) => boardEtag(query as ThreadFilters, reader),
    description: "with a weak `ETag` of the ledger's head, the filters and the viewer; 304 (no body) when If-None-Match matches",
  },
  handler: ({ query }) => loadBoard(query),
});
