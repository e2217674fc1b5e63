import { defineRoute } from "@/lib/http/route";
import { streamLedger, streamQuerySchema } from "@/lib/events/ledger-stream";
import { boardDeltaFrame, boardStreamFilters, boardStreamQuerySchema } from "@/lib/board/board-delta";

/** The format, cursor and limits: lib/events/ledger-stream.ts and docs/http-api.md#open-streams-and-waits. */
export const GET = defineRoute({
  method: "GET",
  path: "/api/v1/stream",
  summary:
    "The ledger as server-sent events, one per ledger event (`id:` is its seq); resume with `Last-Event-ID` or `?after=`. With `?board=<the board's filters>`, each batch is followed by an `event: delta`: the board's changed cards.",
  auth: { kind: "reader" },
  headers: { "Last-Event-ID": "optional: the seq to resume after; wins over `?after=`" },
  query: streamQuerySchema.extend(boardStreamQuerySchema.shape),
  response: {
    kind: "stream",
    status: 200,
    contentType: "text/event-stream",
    description: "`retry`, then `ledger` events (with `?board=`, each batch followed by a `delta`), `reset` and `ready`; `: keep-alive` comments every 15 s",
  },
  errors: ["invalid_request", "rate_limited", "unavailable"],
  handler: ({ request, reader, query }) => {
    // The reader passed the same check as GET /api/v1/board: a delta shows nothing the board would not.
    const filters = boardStreamFilters(query.board);
    return streamLedger(request, reader, filters ? (events) => boardDeltaFrame(events, filters) : undefined);
  },
});
