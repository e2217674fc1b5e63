"use client";

import { useInfiniteQuery, useQueryClient, type InfiniteData } from "@tanstack/react-query";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { BoardFilters, FILTER_KEYS, type BoardFilterValues } from "@/components/board/board-filters";
import { Alert } from "@/components/ui/alert";
import { ChoiceSelect, Field } from "@/components/ui/field";
import { fetchParsed, withQuery } from "@/lib/browser/fetch-parsed";
import { isTextField } from "@/lib/browser/text-field";
import { useDocumentKeys } from "@/lib/browser/use-document-keys";
import { describeLive } from "@/lib/browser/use-ledger-refresh";
import { useLiveQuery } from "@/lib/browser/use-live-query";
import { applyTimelineDelta, applyTimelineFeedDelta, feedNeedsRefetch, parseTimelineDelta, TIMELINE_RESYNC_MS } from "@/lib/browser/timeline-delta";
import { timelineDto, timelineFeedDto, type TimelineDto, type TimelineFeedDto } from "@/lib/views/timeline/dto";
import { DEFAULT_TIMELINE_WINDOW, TIMELINE_WINDOWS, WINDOW_LABELS, WINDOW_MS, type TimelineWindow } from "@/lib/views/timeline/window";
import { TimelineFeed } from "./timeline-feed";
import { TimelineLanes } from "./timeline-lanes";

/** The window slides with the clock even when nothing happens: the browser moves it, dropping what leaves it. */
const SLIDE_EVERY_MS = 60_000;

function filtersFrom(params: URLSearchParams): BoardFilterValues {
  return Object.fromEntries(FILTER_KEYS.map((key) => [key, params.get(key) ?? ""])) as unknown as BoardFilterValues;
}

function windowFrom(params: URLSearchParams): TimelineWindow {
  const value = params.get("window");
  return (TIMELINE_WINDOWS as readonly string[]).includes(value ?? "") ? (value as TimelineWindow) : DEFAULT_TIMELINE_WINDOW;
}

function queryString(values: BoardFilterValues, window: TimelineWindow): string {
  const params = new URLSearchParams();
  if (window !== DEFAULT_TIMELINE_WINDOW) params.set("window", window);
  for (const key of FILTER_KEYS) if (values[key]) params.set(key, values[key]);
  return params.toString();
}

/** The time, ticking every `everyMs` (0 before the first tick: the timeline's own window stands until then). */
function useClock(everyMs: number): number {
  const [now, setNow] = useState(0);
  // Synchronises with the clock, outside React.
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}

/** The timeline with its window moved to end at `now` (the lanes draw only what is inside it). */
function slid(timeline: TimelineDto, now: number): TimelineDto {
  if (now <= Date.parse(timeline.to)) return timeline;
  return { ...timeline, from: new Date(now - WINDOW_MS[timeline.window]).toISOString(), to: new Date(now).toISOString() };
}

/** The timeline: server-rendered first lanes, then TanStack Query for all of them and the feed, refreshed by the ledger stream. */
export function TimelineClient({ initialTimeline, initialSearch }: { initialTimeline: TimelineDto; initialSearch: string }) {
  const router = useRouter();
  const pathname = usePathname();
  const params = useSearchParams();
  const search = params.toString();
  const filters = useMemo(() => filtersFrom(new URLSearchParams(search)), [search]);
  const timeWindow = windowFrom(params);
  const queryClient = useQueryClient();
  const searchRef = useRef<HTMLInputElement>(null);
  const initial = search === initialSearch;

  const feedKey = useMemo(() => ["timeline-feed", search], [search]);
  const feed = useInfiniteQuery({
    queryKey: feedKey,
    queryFn: ({ pageParam }) =>
      fetchParsed(withQuery("/api/v1/timeline/feed", search, pageParam === undefined ? undefined : { before: String(pageParam) }), timelineFeedDto, "the ledger"),
    initialPageParam: undefined as number | undefined,
    getNextPageParam: (last: TimelineFeedDto) => last.next_cursor ?? undefined,
    initialData: initial ? { pages: [initialTimeline.feed], pageParams: [undefined] } : undefined,
    placeholderData: (previous) => previous,
  });

  // The delta's feed rows go on the feed's first page, of the lanes the timeline holds once it is applied.
  const applyFeedDelta = useCallback(
    (frame: unknown, held: TimelineDto | undefined) => {
      const delta = parseTimelineDelta(frame);
      const heldBefore = held?.complete ? new Set(held.lanes.map((lane) => lane.key)) : null;
      if (!delta || feedNeedsRefetch(delta, heldBefore)) return void queryClient.invalidateQueries({ queryKey: feedKey });
      const after = heldBefore ? new Set([...heldBefore, ...delta.lanes.map((lane) => lane.key)].filter((key) => !delta.removes.includes(key))) : null;
      queryClient.setQueryData<InfiniteData<TimelineFeedDto, number | undefined>>(feedKey, (feedHeld) => (feedHeld ? applyTimelineFeedDelta(feedHeld, delta, after) : feedHeld));
    },
    [queryClient, feedKey],
  );

  const { data: timeline, error, live } = useLiveQuery({
    queryKey: ["timeline", search],
    url: withQuery("/api/v1/timeline", search),
    schema: timelineDto,
    what: "the timeline",
    initialData: initial ? initialTimeline : undefined,
    // A first paint with only the first lanes is stale at once: all of them are fetched after hydration.
    initialDataUpdatedAt: initialTimeline.complete ? undefined : 0,
    keepPrevious: true,
    // The server sends the changed lanes and new ledger rows for these filters: events refetch nothing (docs/decisions/061-timeline-deltas.md).
    deltas: { streamUrl: withQuery("/api/v1/stream", "", { timeline: search }), apply: applyTimelineDelta, alsoApply: applyFeedDelta },
    refetchInterval: TIMELINE_RESYNC_MS,
    // A stream reset (a gap it cannot replay) refetches the feed too.
    alsoRefresh: [{ refresh: () => void queryClient.invalidateQueries({ queryKey: ["timeline-feed"] }), gapFor: () => null }],
  });
  const now = useClock(SLIDE_EVERY_MS);

  const navigate = useCallback(
    (values: BoardFilterValues, nextWindow: TimelineWindow) => {
      const next = queryString(values, nextWindow);
      router.replace(next ? `${pathname}?${next}` : pathname, { scroll: false });
    },
    [router, pathname],
  );
  const setFilters = useCallback((values: BoardFilterValues) => navigate(values, timeWindow), [navigate, timeWindow]);

  // "/" focuses the search wherever the focus is (a fresh load leaves it on <body>).
  useDocumentKeys((event) => {
    if (event.key === "/" && !isTextField(event.target as HTMLElement)) {
      event.preventDefault();
      searchRef.current?.focus();
    }
  });

  const shown = slid(timeline ?? initialTimeline, now);
  const events = feed.data?.pages.flatMap((page) => page.events) ?? [];
  const loadError = error ?? feed.error;
  return (
    <div className="flex flex-col gap-4">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div className="flex flex-wrap items-end gap-2">
          <Field label="Window">
            <ChoiceSelect value={timeWindow} choices={TIMELINE_WINDOWS} labels={WINDOW_LABELS} onChoose={(chosen) => navigate(filters, chosen)} />
          </Field>
          <BoardFilters ref={searchRef} values={filters} onChange={setFilters} />
        </div>
        <p className="text-xs text-muted" role="status" aria-live="polite">
          {shown.lanes_total} {shown.lanes_total === 1 ? "thread" : "threads"}
          {shown.lanes_total > shown.lanes.length && shown.complete ? ` (the ${shown.lanes.length} most recently active shown)` : ""} ·{" "}
          {describeLive(live)}
        </p>
      </div>
      {loadError ? <Alert>{loadError.message}</Alert> : null}
      <Legend />
      <TimelineLanes timeline={shown} />
      <TimelineFeed
        events={events}
        // The data's own clock until the page's clock has ticked: the server's and the browser's first render agree.
        now={Math.max(now, Date.parse(shown.generated_at))}
        windowLabel={WINDOW_LABELS[shown.window]}
        hasOlder={Boolean(feed.hasNextPage)}
        loadingOlder={feed.isFetchingNextPage}
        onLoadOlder={() => void feed.fetchNextPage()}
      />
    </div>
  );
}

/** What the marks mean; the colours are the severity badges'. */
function Legend() {
  return (
    <p className="flex flex-wrap items-center gap-x-4 gap-y-1 text-xs text-muted">
      <span className="flex items-center gap-1">
        <span aria-hidden="true" className="inline-block size-3 rounded-full bg-red-700" /> version, coloured by its highest severity
      </span>
      <span className="flex items-center gap-1">
        <span aria-hidden="true" className="inline-block size-2.5 rotate-45 bg-emerald-600" /> approved
      </span>
      <span className="flex items-center gap-1">
        <span aria-hidden="true" className="inline-block size-2.5 rotate-45 bg-purple-600" /> intervened
      </span>
      <span className="flex items-center gap-1">
        <span aria-hidden="true" className="inline-block h-3 w-0.5 bg-emerald-600" /> session started,
        <span aria-hidden="true" className="inline-block h-2 w-px bg-zinc-400" /> heartbeat,
        <span aria-hidden="true" className="inline-block h-3 w-0.5 bg-zinc-600" /> ended
      </span>
      <span>Hover or focus a mark for its next action; click or press Enter to open that version. Arrow keys move between marks.</span>
    </p>
  );
}
