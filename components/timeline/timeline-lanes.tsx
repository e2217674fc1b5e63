"use client";

import { useVirtualizer } from "@tanstack/react-virtual";
import { FoldIcon } from "@/components/ui/icons";
import { useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import type { TimelineDto } from "@/lib/views/timeline/dto";
import { axisTicks, positionOf } from "@/lib/views/timeline/window";
import { laneRows, type LaneRow } from "@/lib/views/timeline/lane-groups";
import { AgentText } from "@/components/ui/agent-text";
import { laneMarkers, nearestMarker } from "./markers";
import { TimelineLane } from "./timeline-lane";

const LANE_HEIGHT = 40;

interface Focus {
  lane: number;
  marker: number;
}

/** Where the last tick label may sit, as a share of the axis: the rest is the "now" label's. */
const NOW_LABEL_ROOM = 0.95;

/** The time axis: tick labels on round UTC hours or days, the window's end marked "now". */
function Axis({ timeline, from, to }: { timeline: TimelineDto; from: number; to: number }) {
  // A tick label close to the right end would print over "now".
  const ticks = axisTicks(timeline.window, from, to).filter((tick) => positionOf(tick.at, from, to) < NOW_LABEL_ROOM);
  return (
    <div className="sticky top-0 z-10 flex h-7 items-end border-b border-zinc-300 bg-canvas text-[11px] text-muted dark:border-zinc-700" aria-hidden="true">
      <div className="sticky left-0 z-[1] w-36 shrink-0 bg-canvas pb-1 pl-1 font-semibold sm:w-48 md:w-64">Thread</div>
      <div className="relative mx-2 h-full flex-1">
        {ticks.map((tick) => (
          <span key={tick.at} className="absolute bottom-1 -translate-x-1/2 whitespace-nowrap" style={{ left: `${positionOf(tick.at, from, to) * 100}%` }}>
            {tick.label}
          </span>
        ))}
        <span className="absolute right-0 bottom-1 font-semibold">now</span>
      </div>
    </div>
  );
}

/** Vertical lines under the lanes at the axis ticks: a handful of elements for all lanes. */
function GridLines({ timeline, from, to, height }: { timeline: TimelineDto; from: number; to: number; height: number }) {
  return (
    <div className="pointer-events-none absolute top-0 right-2 left-[calc(9rem+0.5rem)] sm:left-[calc(12rem+0.5rem)] md:left-[calc(16rem+0.5rem)]" style={{ height }} aria-hidden="true">
      {axisTicks(timeline.window, from, to).map((tick) => (
        <span key={tick.at} className="absolute top-0 h-full border-l border-dashed border-line" style={{ left: `${positionOf(tick.at, from, to) * 100}%` }} />
      ))}
    </div>
  );
}

const GROUP_HEIGHT = 32;

/** A row of the lanes' height with a button that folds or unfolds some of them; the button stays in view when the lanes scroll sideways. */
function FoldRow({ open, onToggle, className, buttonClassName = "", children }: { open: boolean; onToggle: () => void; className: string; buttonClassName?: string; children: ReactNode }) {
  return (
    <div className={`flex h-8 items-center border-b border-line px-1 text-xs ${className}`}>
      <button
        type="button"
        aria-expanded={open}
        onClick={onToggle}
        className={`sticky left-1 min-h-6 rounded-sm px-1 hover:underline focus-visible:outline-2 focus-visible:outline-focus ${buttonClassName}`}
      >
        {children}
      </button>
    </div>
  );
}

/** A project's header: its name and counts, a button folding its lanes. */
function GroupRow({ row, onToggle }: { row: Extract<LaneRow, { kind: "group" }>; onToggle: (group: string) => void }) {
  return (
    <FoldRow
      open={row.open}
      onToggle={() => onToggle(row.group)}
      className="bg-zinc-100 dark:bg-zinc-900"
      // One line, whatever the project's name: a wrapped header would cover the lane below it and its markers.
      buttonClassName="flex max-w-[min(36rem,85vw)] items-center gap-1 font-semibold whitespace-nowrap"
    >
      <FoldIcon open={row.open} />
      {row.label === null ? <span>No project</span> : <AgentText className="min-w-0 truncate" text={row.label} />}
      <span className="shrink-0 font-normal text-muted">
        · {row.lanes} {row.lanes === 1 ? "thread" : "threads"}
        {row.quiet ? `, ${row.quiet} quiet` : ""}
      </span>
    </FoldRow>
  );
}

/** The fold of a group's quiet lanes (nothing in the window): one row instead of many empty ones. */
function QuietRow({ row, onToggle }: { row: Extract<LaneRow, { kind: "quiet" }>; onToggle: (group: string) => void }) {
  return (
    <FoldRow open={row.shown} onToggle={() => onToggle(row.group)} className="text-muted">
      {row.shown ? "Hide" : "Show"} {row.count} quiet {row.count === 1 ? "thread" : "threads"} (nothing in this window)
    </FoldRow>
  );
}

const toggled = (set: ReadonlySet<string>, key: string) => {
  const next = new Set(set);
  if (!next.delete(key)) next.add(key);
  return next;
};

/**
 * The swimlanes, virtualised: only the rows in view (and a few around) are in the DOM, so 500
 * lanes cost what 20 do. Lanes are grouped by project (a header each when there is more than
 * one) and a group's quiet lanes sit behind one row. The keyboard focus is one marker; moving
 * it to a lane out of view scrolls there first. On a narrow screen the lanes scroll sideways
 * inside their box, their labels held at its left edge.
 */
export function TimelineLanes({ timeline }: { timeline: TimelineDto }) {
  const from = Date.parse(timeline.from);
  const to = Date.parse(timeline.to);
  const scrollRef = useRef<HTMLDivElement>(null);
  const [grouped, setGrouped] = useState(true);
  const [closed, setClosed] = useState<ReadonlySet<string>>(new Set());
  const [quietShown, setQuietShown] = useState<ReadonlySet<string>>(new Set());
  const { rows, visible: lanes } = useMemo(
    () => laneRows(timeline.lanes, { from, bucketMs: timeline.session_bucket_ms, grouped, closed, quietShown }),
    [timeline.lanes, from, timeline.session_bucket_ms, grouped, closed, quietShown],
  );
  const rowOfLane = useMemo(() => {
    const map: number[] = [];
    rows.forEach((row, index) => {
      if (row.kind === "lane") map[row.lane] = index;
    });
    return map;
  }, [rows]);
  const [focus, setFocus] = useState<Focus | null>(null);
  // Counts keyboard moves: only those move the DOM focus (a click or Tab already did).
  const [focusRequest, setFocusRequest] = useState(0);
  // eslint-disable-next-line react-hooks/incompatible-library -- the virtualizer's functions are not memoised; nothing here relies on them being stable.
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: (index) => (rows[index]?.kind === "lane" ? LANE_HEIGHT : GROUP_HEIGHT),
    overscan: 6,
    // The server renders the first screenful too (no scroll element there).
    initialRect: { width: 1200, height: 640 },
    getItemKey: (index) => {
      const row = rows[index];
      return row?.kind === "lane" ? row.key : row ? `${row.kind}:${row.group}` : index;
    },
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
    const row = rowOfLane[focus.lane];
    if (row !== undefined) virtualizer.scrollToIndex(row, { align: "auto" });
    const frame = requestAnimationFrame(() => {
      scrollRef.current?.querySelector<HTMLElement>(`[data-lane-index="${focus.lane}"] [data-marker-index="${focus.marker}"]`)?.focus();
    });
    return () => cancelAnimationFrame(frame);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- runs per keyboard move, not when a focus event moved the position.
  }, [focusRequest]);

  // Synchronises the sideways scroll with the layout: a narrow screen opens on "now", the window's recent end.
  const hasLanes = timeline.lanes.length > 0;
  useEffect(() => {
    const box = scrollRef.current;
    if (box && box.scrollWidth > box.clientWidth) box.scrollLeft = box.scrollWidth;
  }, [hasLanes]);

  if (!timeline.lanes.length) {
    return <p className="rounded-lg bg-zinc-100 p-4 text-sm text-muted dark:bg-zinc-900">No active thread matches these filters.</p>;
  }
  const projects = new Set(timeline.lanes.map((lane) => lane.project)).size;
  const height = virtualizer.getTotalSize();
  return (
    <div className="flex flex-col gap-1">
      {projects > 1 ? (
        <label className="flex min-h-6 items-center gap-2 self-start text-xs">
          <input type="checkbox" checked={grouped} onChange={(event) => setGrouped(event.target.checked)} className="size-4" />
          Group by project
        </label>
      ) : null}
      <div ref={scrollRef} className="max-h-[70vh] min-h-40 overflow-auto rounded-lg ring-1 ring-line" data-testid="timeline-lanes">
        <div className="min-w-[40rem]">
          <Axis timeline={timeline} from={from} to={to} />
          <div role="list" aria-label="Lanes" className="relative" style={{ height }}>
            <GridLines timeline={timeline} from={from} to={to} height={height} />
            {virtualizer.getVirtualItems().map((item) => {
              const row = rows[item.index]!;
              return (
                <div
                  key={item.key}
                  role="listitem"
                  aria-label={row.kind === "lane" ? row.key : undefined}
                  className="absolute top-0 left-0 w-full" style={{ height: item.size, transform: `translateY(${item.start}px)` }}>
                  {row.kind === "group" ? (
                    <GroupRow row={row} onToggle={(group) => setClosed((set) => toggled(set, group))} />
                  ) : row.kind === "quiet" ? (
                    <QuietRow row={row} onToggle={(group) => setQuietShown((set) => toggled(set, group))} />
                  ) : (
                    <TimelineLane
                      lane={lanes[row.lane]!}
                      index={row.lane}
                      from={from}
                      to={to}
                      sessionBucketMs={timeline.session_bucket_ms}
                      current={focus?.lane === row.lane ? focus.marker : null}
                      onMove={onMove}
                      onFocusMarker={onFocusMarker}
                    />
                  )}
                </div>
              );
            })}
          </div>
        </div>
      </div>
    </div>
  );
}
