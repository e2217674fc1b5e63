"use client";

import { useVirtualizer } from "@tanstack/react-virtual";
import { useCallback, useEffect, useRef, useState } from "react";
import type { TimelineDto } from "@/lib/views/timeline/dto";
import { axisTicks, positionOf } from "@/lib/views/timeline/window";
import { laneMarkers, nearestMarker } from "./markers";
import { TimelineLane } from "./timeline-lane";

const LANE_HEIGHT = 40;

interface Focus {
  lane: number;
  marker: number;
}

/** The time axis: tick labels on round UTC hours or days, the window's end marked "now". */
function Axis({ timeline, from, to }: { timeline: TimelineDto; from: number; to: number }) {
  const ticks = axisTicks(timeline.window, from, to);
  return (
    <div className="sticky top-0 z-10 flex h-7 items-end border-b border-zinc-300 bg-canvas text-[11px] text-muted dark:border-zinc-700" aria-hidden="true">
      <div className="w-48 shrink-0 pb-1 font-semibold md:w-64">Thread</div>
      <div className="relative mx-2 h-full flex-1">
        {ticks.map((tick) => (
          <span key={tick.at} className="absolute bottom-1 -translate-x-1/2 whitespace-nowrap" style={{ left: `${positionOf(tick.at, from, to) * 100}%` }}>
            {tick.label}
          </span>
        ))}
        <span className="absolute right-0 bottom-1 translate-x-1/2 font-semibold">now</span>
      </div>
    </div>
  );
}

/** Vertical lines under the lanes at the axis ticks: a handful of elements for all lanes. */
function GridLines({ timeline, from, to, height }: { timeline: TimelineDto; from: number; to: number; height: number }) {
  return (
    <div className="pointer-events-none absolute top-0 right-2 left-[calc(12rem+0.5rem)] md:left-[calc(16rem+0.5rem)]" style={{ height }} aria-hidden="true">
      {axisTicks(timeline.window, from, to).map((tick) => (
        <span key={tick.at} className="absolute top-0 h-full border-l border-dashed border-line" style={{ left: `${positionOf(tick.at, from, to) * 100}%` }} />
      ))}
    </div>
  );
}

/**
 * The swimlanes, virtualised: only the lanes in view (and a few around) are in
 * the DOM, so 200 lanes over 7 days cost what 20 do. The keyboard focus is one
 * marker; moving it to a lane out of view scrolls there first.
 */
export function TimelineLanes({ timeline }: { timeline: TimelineDto }) {
  const from = Date.parse(timeline.from);
  const to = Date.parse(timeline.to);
  const lanes = timeline.lanes;
  const scrollRef = useRef<HTMLDivElement>(null);
  const [focus, setFocus] = useState<Focus | null>(null);
  // Counts keyboard moves: only those move the DOM focus (a click or Tab already did).
  const [focusRequest, setFocusRequest] = useState(0);
  // eslint-disable-next-line react-hooks/incompatible-library -- the virtualizer's functions are not memoised; nothing here relies on them being stable.
  const virtualizer = useVirtualizer({
    count: lanes.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => LANE_HEIGHT,
    overscan: 6,
    // The server renders the first screenful too (no scroll element there).
    initialRect: { width: 1200, height: 640 },
    getItemKey: (index) => lanes[index]?.key ?? index,
  });

  const onMove = useCallback(
    (lane: number, marker: number | "up" | "down") => {
      setFocus((current) => {
        if (typeof marker === "number") return { lane, marker };
        const markers = laneMarkers(lanes[lane]!, from, to);
        const at = markers[current?.lane === lane ? current.marker : markers.length - 1]?.at ?? to;
        const step = marker === "up" ? -1 : 1;
        // The nearest marker in time of the next lane that has one.
        for (let next = lane + step; next >= 0 && next < lanes.length; next += step) {
          const target = nearestMarker(laneMarkers(lanes[next]!, from, to), at);
          if (target >= 0) return { lane: next, marker: target };
        }
        return current;
      });
      setFocusRequest((count) => count + 1);
    },
    [lanes, from, to],
  );
  const onFocusMarker = useCallback((lane: number, marker: number) => {
    setFocus((current) => (current?.lane === lane && current.marker === marker ? current : { lane, marker }));
  }, []);

  // Synchronises the DOM focus (outside React) with a keyboard move: scrolls the lane into view, then focuses the marker.
  useEffect(() => {
    if (!focus || focusRequest === 0) return;
    virtualizer.scrollToIndex(focus.lane, { align: "auto" });
    const frame = requestAnimationFrame(() => {
      scrollRef.current?.querySelector<HTMLElement>(`[data-lane-index="${focus.lane}"] [data-marker-index="${focus.marker}"]`)?.focus();
    });
    return () => cancelAnimationFrame(frame);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- runs per keyboard move, not when a focus event moved the position.
  }, [focusRequest]);

  if (!lanes.length) {
    return <p className="rounded-lg bg-zinc-100 p-4 text-sm text-muted dark:bg-zinc-900">No active thread matches these filters.</p>;
  }
  const height = virtualizer.getTotalSize();
  return (
    <div ref={scrollRef} className="max-h-[60vh] min-h-40 overflow-y-auto rounded-lg ring-1 ring-line" data-testid="timeline-lanes">
      <Axis timeline={timeline} from={from} to={to} />
      <div role="list" aria-label="Lanes" className="relative" style={{ height }}>
        <GridLines timeline={timeline} from={from} to={to} height={height} />
        {virtualizer.getVirtualItems().map((item) => (
          <div
            key={item.key}
            role="listitem"
            aria-setsize={lanes.length}
            aria-posinset={item.index + 1}
            aria-label={lanes[item.index]!.key}
            className="absolute top-0 left-0 w-full"
            style={{ height: item.size, transform: `translateY(${item.start}px)` }}
          >
            <TimelineLane
              lane={lanes[item.index]!}
              index={item.index}
              from={from}
              to={to}
              sessionBucketMs={timeline.session_bucket_ms}
              current={focus?.lane === item.index ? focus.marker : null}
              onMove={onMove}
              onFocusMarker={onFocusMarker}
            />
          </div>
        ))}
      </div>
    </div>
  );
}
