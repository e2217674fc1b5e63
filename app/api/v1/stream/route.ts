import { defineRoute } from "@/lib/http/route";
import { streamLedger, streamQuerySchema } from "@/lib/events/ledger-stream";

/** The format, cursor and limits: lib/events/ledger-stream.ts and docs/http-api.md#open-streams-and-waits. */
export const GET = defineRoute({
  method: "GET",
  path: "/api/v1/stream",
  summary: "The ledger as server-sent events, one per ledger event (`id:` is its seq); resume with `Last-Event-ID` or `?after=`.",
  auth: { kind: "reader" },
  headers: { "Last-Event-ID": "optional: the seq to resume after; wins over `?after=`" },
  query: streamQuerySchema,
  response: { kind: "stream", status: 200, contentType: "text/event-stream", description: "`retry`, then `ledger` events, `reset` and `ready`; `: keep-alive` comments every 15 s" },
  errors: ["rate_limited", "unavailable"],
  handler: ({ request, reader }) => streamLedger(request, reader),
});
