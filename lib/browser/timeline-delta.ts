import type { InfiniteData } from "@tanstack/react-query";
import {
  TIMELINE_FEED_PAGE,
  TIMELINE_LANES_MAX,
  compareTimelineLanes,
  timelineDeltaDto,
  type TimelineDeltaDto,
  type TimelineDto,
  type TimelineFeedDto,
} from "../views/timeline/dto";

/**
 * How often a timeline that follows deltas is fetched whole all the same: the window slides
 * with the clock (the browser drops what leaves it), but a lane's session counts cover the
 * window it was read for. Each viewer costs one timeline load per period.
 */
export const TIMELINE_RESYNC_MS = 10 * 60_000;

/** A feed held by the browser keeps at most this many live rows on its first page; older ones are a "Show older" away. */
const FEED_FIRST_PAGE_MAX = 4 * TIMELINE_FEED_PAGE;

export function parseTimelineDelta(frame: unknown): TimelineDeltaDto | null {
  const parsed = timelineDeltaDto.safeParse(frame);
  return parsed.success && !parsed.data.refetch ? parsed.data : null;
}

/**
 * The timeline with a stream delta applied (lib/views/timeline/timeline-delta.ts): changed lanes
 * replaced at their place in the order, lanes that no longer match dropped, at most
 * TIMELINE_LANES_MAX kept, the window moved to the delta's. Null when it must be refetched: the
 * delta asks for it or does not pass its schema, it is of another window, the timeline holds
 * only its first lanes (a first paint), or the lanes are capped and the delta cannot say what
 * comes in past the cap (a held lane removed, or a thread counted nowhere).
 */
export function applyTimelineDelta(timeline: TimelineDto, frame: unknown): TimelineDto | null {
  const delta = parseTimelineDelta(frame);
  if (!delta || !timeline.complete || delta.window !== timeline.window) return null;
  const held = new Set(timeline.lanes.map((lane) => lane.key));
  const capped = timeline.lanes.length < timeline.lanes_total;
  const removed = delta.removes.filter((key) => held.has(key));
  const added = delta.lanes.filter((lane) => !held.has(lane.key));
  // A lane leaving a capped timeline lets in one this browser never had.
  if (capped && removed.length) return null;
  let total = delta.lanes_total;
  if (total === null) {
    // Without the server's count, a thread new to a capped timeline may or may not have been counted.
    if (capped && added.length) return null;
    total = timeline.lanes_total + added.length - removed.length;
  }
  const changed = new Set([...delta.removes, ...delta.lanes.map((lane) => lane.key)]);
  const lanes = [...timeline.lanes.filter((lane) => !changed.has(lane.key)), ...delta.lanes].sort(compareTimelineLanes).slice(0, TIMELINE_LANES_MAX);
  return { ...timeline, generated_at: delta.generated_at, from: delta.from, to: delta.to, lanes_total: total, lanes };
}

/**
 * Whether a delta brings into the feed a thread with older rows it never held (a thread that
 * starts matching the filters): the feed is then refetched. `heldBefore`: the lanes the timeline
 * held before the delta, or null when unknown.
 */
export function feedNeedsRefetch(delta: TimelineDeltaDto, heldBefore: ReadonlySet<string> | null): boolean {
  return delta.earlier_feed.some((key) => heldBefore === null || !heldBefore.has(key));
}

/**
 * The feed with a delta's rows put first (those newer than what it holds, of threads that keep
 * a lane) and the rows of threads that lost theirs dropped. `laneKeys`: the lanes the timeline
 * holds after the delta, or null when it holds only its first ones (the feed is of every lane).
 * Applying a delta twice changes nothing. See feedNeedsRefetch for a thread joining.
 */
export function applyTimelineFeedDelta(
  feed: InfiniteData<TimelineFeedDto, number | undefined>,
  delta: TimelineDeltaDto,
  laneKeys: ReadonlySet<string> | null,
): InfiniteData<TimelineFeedDto, number | undefined> {
  const newest = feed.pages[0]?.events[0]?.seq ?? 0;
  const fresh = delta.feed.filter((event) => event.seq > newest && (laneKeys === null || laneKeys.has(event.thread_key)));
  const gone = new Set(delta.removes);
  if (!fresh.length && !feed.pages.some((page) => page.events.some((event) => gone.has(event.thread_key)))) return feed;
  const pages = feed.pages.map((page, index) => {
    const events = (index === 0 ? [...fresh, ...page.events] : page.events).filter((event) => !gone.has(event.thread_key));
    return events.length === page.events.length && index > 0 ? page : { ...page, events };
  });
  const first = pages[0];
  // A feed left open keeps its newest rows: the first page is cut back when no older page hangs off it.
  if (first && pages.length === 1 && first.events.length > FEED_FIRST_PAGE_MAX) {
    const kept = first.events.slice(0, TIMELINE_FEED_PAGE);
    pages[0] = { events: kept, next_cursor: kept.at(-1)!.seq };
  }
  return { ...feed, pages };
}
