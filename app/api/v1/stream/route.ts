import { z } from "zod";
import { defineRoute } from "@/lib/http/route";
import { streamLedger, streamQuerySchema, type StreamFrames } from "@/lib/events/ledger-stream";
import { boardDeltaFrame, boardStreamFilters, boardStreamQuerySchema } from "@/lib/board/board-delta";
import { inboxDeltaFrame } from "@/lib/views/questions/inbox-delta";
import { timelineDeltaFrame, timelineStreamQuery, timelineStreamQuerySchema } from "@/lib/views/timeline/timeline-delta";
import { risksDeltaFrame, risksStreamFilters, risksStreamQuerySchema } from "@/lib/views/risks/risks-delta";

const querySchema = streamQuerySchema.extend(boardStreamQuerySchema.shape).extend(timelineStreamQuerySchema.shape).extend(risksStreamQuerySchema.shape).extend({
  questions: z.string().max(0, "questions takes no value: ?questions= asks for the inbox's deltas").optional(),
});

/** The format, cursor and limits: lib/events/ledger-stream.ts and docs/http-api.md#open-streams-and-waits. */
export const GET = defineRoute({
  method: "GET",
  path: "/api/v1/stream",
  summary:
    "The ledger as server-sent events, one per ledger event (`id:` is its seq); resume with `Last-Event-ID` or `?after=`. With `?board=<the board's filters>`, `?questions=`, `?risks=<the risks list's filters>` or `?timeline=<the timeline's filters and window>`, each batch is followed by an `event: delta` per view: the board's changed cards, the inbox's changed questions, the risks list's changed groups, the timeline's changed lanes and new ledger rows.",
  auth: { kind: "reader" },
  headers: { "Last-Event-ID": "optional: the seq to resume after; wins over `?after=`" },
  query: querySchema,
  response: {
    kind: "stream",
    status: 200,
    contentType: "text/event-stream",
    description: "`retry`, then `ledger` events (with `?board=`, `?questions=`, `?risks=` or `?timeline=`, each batch followed by its `delta` frames), `reset` and `ready`; `: keep-alive` comments every 15 s",
  },
  errors: ["invalid_request", "rate_limited", "unavailable"],
  handler: ({ request, reader, query }) => {
    // The reader passed the same check as GET /api/v1/board, /api/v1/questions and /api/v1/risks: a delta shows nothing they would not.
    const filters = boardStreamFilters(query.board);
    const timeline = timelineStreamQuery(query.timeline);
    const riskFilters = risksStreamFilters(query.risks);
    const makers: StreamFrames[] = [];
    if (filters) makers.push((events) => boardDeltaFrame(events, filters));
    if (riskFilters) makers.push((events) => risksDeltaFrame(events, riskFilters));
    if (query.questions !== undefined) makers.push(inboxDeltaFrame);
    if (timeline) makers.push((events) => timelineDeltaFrame(events, timeline));
    const frames: StreamFrames | undefined = makers.length
      ? async (events) => (await Promise.all(makers.map((make) => make(events)))).join("")
      : undefined;
    return streamLedger(request, reader, frames);
  },
});
