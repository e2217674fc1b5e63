import { z } from "zod";
import { isoTime } from "../../core/iso-time";
import { SEVERITIES } from "../../contract/severity";
import { threadIdentityDto } from "../threads/dto";
import { threadFiltersSchema } from "../threads/filters";
import { DECISION_KINDS } from "../../human/section";
import { DEFAULT_TIMELINE_WINDOW, TIMELINE_WINDOWS } from "./window";

/**
 * The timeline's shapes (GET /api/v1/timeline, GET /api/v1/timeline/feed),
 * client-safe: the server builds them in ./queries.ts and ./feed.ts, the
 * browser parses refetches with them. Dates are ISO strings.
 */

/** At most this many lanes (the most recently active threads first); lanes_total says how many matched. */
export const TIMELINE_LANES_MAX = 500;
/** At most this many version markers per lane (the newest); versions_omitted counts the rest. */
export const TIMELINE_VERSIONS_PER_LANE_MAX = 200;
/** At most this many decision markers per lane (the newest). */
export const TIMELINE_DECISIONS_PER_LANE_MAX = 100;
/** Session reports are drawn as ticks: those of one kind within 1/TIMELINE_SESSION_BUCKETS of the window (a span) are one tick. */
export const TIMELINE_SESSION_BUCKETS = 240;
/** next_action text is cut to this length for tooltips (the thread page has it whole). */
export const TIMELINE_NEXT_ACTION_MAX = 280;
/** Feed events per page. */
export const TIMELINE_FEED_PAGE = 50;

export const timelineQuerySchema = threadFiltersSchema.extend({
  window: z.enum(TIMELINE_WINDOWS, { error: () => `window accepts ${TIMELINE_WINDOWS.join(", ")}` }).default(DEFAULT_TIMELINE_WINDOW),
});
export type TimelineQuery = z.infer<typeof timelineQuerySchema>;

export const timelineFeedQuerySchema = timelineQuerySchema.extend({
  /** The feed's cursor: events with a smaller seq (the next_cursor of the page before). */
  before: z.coerce.number().int().min(1).optional(),
});
export type TimelineFeedQuery = z.infer<typeof timelineFeedQuerySchema>;

export const timelineVersionDto = z.object({
  id: z.string(),
  /** Its place in the thread's order, 1 for the first version (as on the thread page). */
  number: z.number().int().min(1),
  received_at: isoTime,
  /** Where the marker sits: the agent's time (the packet's created_at, when plausible) or, without one, received_at. */
  at: isoTime,
  at_source: z.enum(["agent", "received"]),
  highest_severity: z.enum(SEVERITIES).nullable(),
  next_action: z.string().nullable(),
});
export type TimelineVersionDto = z.infer<typeof timelineVersionDto>;

export const timelineDecisionDto = z.object({
  packet_id: z.string(),
  action: z.enum(DECISION_KINDS),
  at: isoTime,
  by: z.string().nullable(),
});
export type TimelineDecisionDto = z.infer<typeof timelineDecisionDto>;

/**
 * Session reports of one kind in a lane, drawn as ticks: time is cut into spans of
 * `session_bucket_ms` (1/TIMELINE_SESSION_BUCKETS of the window) counted from the Unix epoch,
 * and `buckets` lists the spans holding at least one (floor(time / session_bucket_ms)), so a
 * lane read later (a live delta) lines up with the others; `count` is how many reports there were.
 */
export const timelineSessionTicksDto = z.object({
  buckets: z.array(z.number().int().min(0)),
  count: z.number().int().min(0),
});
export type TimelineSessionTicksDto = z.infer<typeof timelineSessionTicksDto>;

export const timelineLaneDto = threadIdentityDto.extend({
  /** When the thread last moved (a packet, an archive): lanes are ordered by it, newest first (compareTimelineLanes). */
  active_at: isoTime,
  /** Oldest first. */
  versions: z.array(timelineVersionDto),
  versions_omitted: z.number().int().min(0),
  decisions: z.array(timelineDecisionDto),
  sessions: z.object({ session_started: timelineSessionTicksDto, heartbeat: timelineSessionTicksDto, session_ended: timelineSessionTicksDto }),
});
export type TimelineLaneDto = z.infer<typeof timelineLaneDto>;

/** A ledger event of the feed, already in words. */
export const timelineFeedEventDto = z.object({
  seq: z.number().int(),
  at: isoTime,
  /** A ledger kind (lib/events/ledger.ts, server-only: not imported here). */
  kind: z.string(),
  thread_key: z.string(),
  packet_id: z.string().nullable(),
  actor: z.string(),
  text: z.string(),
});
export type TimelineFeedEventDto = z.infer<typeof timelineFeedEventDto>;

export const timelineFeedDto = z.object({
  /** Newest first. */
  events: z.array(timelineFeedEventDto),
  /** Pass as `before` for the next (older) page; null at the window's start. */
  next_cursor: z.number().int().nullable(),
});
export type TimelineFeedDto = z.infer<typeof timelineFeedDto>;

export const timelineDto = z.object({
  generated_at: isoTime,
  window: z.enum(TIMELINE_WINDOWS),
  from: isoTime,
  to: isoTime,
  session_buckets: z.number().int().min(1),
  /** The length of a session span: the window / session_buckets. */
  session_bucket_ms: z.number().int().min(1),
  /** Threads that match the filters; at most TIMELINE_LANES_MAX of them get a lane. */
  lanes_total: z.number().int().min(0),
  lanes: z.array(timelineLaneDto),
  /** False when only the first lanes were sent (a first paint): fetch the timeline again for the rest. */
  complete: z.boolean(),
  /** The first page of the feed. */
  feed: timelineFeedDto,
});
export type TimelineDto = z.infer<typeof timelineDto>;

/** The lanes' order, the server's and the browser's: the most recently active thread first, then by key. */
export function compareTimelineLanes(a: Pick<TimelineLaneDto, "active_at" | "key">, b: Pick<TimelineLaneDto, "active_at" | "key">): number {
  return Date.parse(b.active_at) - Date.parse(a.active_at) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

/**
 * What a batch of ledger events changed on a timeline with these filters and window
 * (`event: delta` of GET /api/v1/stream?timeline=, docs/decisions/061-timeline-deltas.md):
 * the changed lanes whole, the keys that no longer have one, the batch's feed rows. Its size
 * grows with the batch, never with the timeline.
 */
export const timelineDeltaDto = z.object({
  view: z.literal("timeline"),
  seq: z.number().int(),
  generated_at: isoTime,
  window: z.enum(TIMELINE_WINDOWS),
  from: isoTime,
  to: isoTime,
  /** Lanes of the threads the batch names that match the filters, in compareTimelineLanes order. */
  lanes: z.array(timelineLaneDto),
  /** Threads the batch names that no longer match (archived, or filtered out). */
  removes: z.array(z.string()),
  /** Threads matching the filters now; null when counting them would read the whole board (a flag filter). */
  lanes_total: z.number().int().min(0).nullable(),
  /** The batch's feed rows (heartbeats left out) of threads that match, newest first. */
  feed: z.array(timelineFeedEventDto),
  /** Of `lanes`, the threads with feed rows in the window before the batch: a browser that did not hold their lane refetches its feed. */
  earlier_feed: z.array(z.string()),
  /** The browser fetches the timeline whole instead. */
  refetch: z.boolean(),
});
export type TimelineDeltaDto = z.infer<typeof timelineDeltaDto>;
