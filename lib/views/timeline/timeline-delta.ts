import "server-only";
import { viewStreamQuery, viewStreamQuerySchema } from "../../events/view-stream-query";
import { sqlExecutor } from "../../db/client";
import { threadsNamedBy, type LedgerEventDto } from "../../events/dto";
import { viewDeltaFrame } from "../../events/shared-frames";
import { readActiveThreadsAround } from "../../board/watchdog/findings";
import { timelineDeltaDto, timelineQuerySchema, type TimelineDeltaDto, type TimelineQuery } from "./dto";
import { feedEventOf, inFeed, threadsWithFeedBefore } from "./feed";
import { findChangedLaneThreads, timelineSpan } from "./lanes";
import { firstSeqFrom } from "./ledger-window";
import { readLanes } from "./queries";

/**
 * The timeline's changes over the live stream (docs/decisions/061-timeline-deltas.md): for each
 * batch of ledger events, the lanes of the threads it names are read once per distinct filters
 * and window, by the timeline's own functions (readLanes, the feed's words), and every stream
 * asking for them sends the same frame.
 */

/** `?timeline=` of GET /api/v1/stream: the timeline's filters and window as its page URL has them; empty for none. */
export const timelineStreamQuerySchema = viewStreamQuerySchema("timeline", "the timeline's filters and window as a query string");

/** The query named by `?timeline=`, or null when the stream does not ask for timeline deltas; 400 for bad filters. */
export function timelineStreamQuery(timeline: string | undefined): TimelineQuery | null {
  return viewStreamQuery("timeline", timeline, timelineQuerySchema);
}

/** The lane and feed changes `events` made on a timeline with `query`, read at `now`. */
export async function computeTimelineDelta(events: readonly LedgerEventDto[], query: TimelineQuery, now: Date = new Date()): Promise<TimelineDeltaDto> {
  const { from, to } = timelineSpan(query.window, now);
  const base = { view: "timeline", seq: events.at(-1)?.seq ?? 0, generated_at: now.toISOString(), window: query.window, from: from.toISOString(), to: to.toISOString() } as const;
  const none = (refetch: boolean): TimelineDeltaDto => ({ ...base, lanes: [], removes: [], lanes_total: null, feed: [], earlier_feed: [], refetch });
  const named = threadsNamedBy(events);
  if (named === null) return none(true);
  if (!named.length) return none(false);
  // A flag can come or go on the project's and branch's other threads (a duplicate topic): their lanes are read too.
  const keys = query.flag.length ? [...new Set([...named, ...(await readActiveThreadsAround(named)).map((thread) => thread.key)])] : named;
  const { threads, total } = await findChangedLaneThreads(query, keys, now);
  const sql = await sqlExecutor();
  const minSeq = threads.length ? await firstSeqFrom(sql, from) : 0;
  const lanes = await readLanes(sql, threads, minSeq, query.window, from, to);
  const laneKeys = new Set(lanes.map((lane) => lane.key));
  const feed = events
    .filter((event) => event.thread_key !== null && laneKeys.has(event.thread_key) && inFeed(event.kind))
    .filter((event) => Date.parse(event.at) >= from.getTime() && Date.parse(event.at) <= to.getTime())
    .map((event) => feedEventOf({ ...event, thread_key: event.thread_key! }))
    .sort((a, b) => b.seq - a.seq);
  const earlier = await threadsWithFeedBefore(sql, [...laneKeys], { minSeq, before: events[0]!.seq, from, to });
  return timelineDeltaDto.parse({ ...base, lanes, removes: keys.filter((key) => !laneKeys.has(key)), lanes_total: total, feed, earlier_feed: earlier, refetch: false });
}

/** The `event: delta` frame of the timeline for a batch, made once per filters and window; a failure is told as a refetch. */
export function timelineDeltaFrame(events: readonly LedgerEventDto[], query: TimelineQuery): Promise<string> {
  return viewDeltaFrame("timeline", events, query, () => computeTimelineDelta(events, query), (): TimelineDeltaDto => {
    const now = new Date();
    const { from, to } = timelineSpan(query.window, now);
    const none = { lanes: [], removes: [], lanes_total: null, feed: [], earlier_feed: [], refetch: true };
    return { view: "timeline", seq: events.at(-1)?.seq ?? 0, generated_at: now.toISOString(), window: query.window, from: from.toISOString(), to: to.toISOString(), ...none };
  });
}
