"use client";

import { ThreadLink } from "@/components/shared/thread-link";
import Link from "next/link";
import { memo, useId, useLayoutEffect, useRef, useState, type KeyboardEvent } from "react";
import { createPortal } from "react-dom";
import { SEVERITY_STYLES } from "@/components/shared/severity-badge";
import type { TimelineLaneDto } from "@/lib/views/timeline/dto";
import { AgentText, AgentTextList } from "@/components/ui/agent-text";
import { visibleText } from "@/lib/contract/invisible";
import { tooltipPlace } from "@/lib/browser/tooltip-place";
import { laneMarkers, type TimelineMarker } from "./markers";

interface TimelineLaneProps {
  lane: TimelineLaneDto;
  index: number;
  from: number;
  to: number;
  sessionBucketMs: number;
  /** The marker that holds the lane's tab stop; null: the newest. */
  current: number | null;
  /** Arrow keys and Home/End: the lanes component moves the focus (and scrolls). */
  onMove: (lane: number, marker: number | "up" | "down") => void;
  onFocusMarker: (lane: number, marker: number) => void;
}

/** Shared by every marker of a lane, set once on the lane (first paints carry thousands of markers). */
const TRACK_MARKERS =
  "[&>a]:absolute [&>a]:top-1/2 [&>a]:block [&>a]:-translate-x-1/2 [&>a]:-translate-y-1/2 [&>a]:outline-none [&>a]:focus-visible:ring-2 [&>a]:focus-visible:ring-focus [&>a]:focus-visible:ring-offset-1";
const VERSION_SHAPE = "size-3 rounded-full border border-white dark:border-zinc-950";
const NO_RISKS = "bg-surface ring-1 ring-zinc-400";
const DECISION_STYLES = { approved: "bg-emerald-600", intervened: "bg-purple-600" } as const;

function markerClass(marker: TimelineMarker): string {
  if (marker.kind === "decision") return `mt-[-9px] size-2.5 rotate-45 ${DECISION_STYLES[marker.action!]}`;
  return `${VERSION_SHAPE} ${marker.severity ? SEVERITY_STYLES[marker.severity] : NO_RISKS}`;
}

/**
 * Ticks of the session reports: one SVG path per kind, one DOM node however many there are.
 * Spans are counted from the epoch (TimelineDto.session_bucket_ms); those before `from` are left out.
 */
function SessionTicks({ sessions, from, to, bucketMs }: { sessions: TimelineLaneDto["sessions"]; from: number; to: number; bucketMs: number }) {
  const first = from / bucketMs;
  const width = (to - from) / bucketMs;
  const path = (spans: number[], top: number, bottom: number) =>
    spans
      .filter((span) => span + 1 > first)
      .map((span) => `M${(span + 0.5 - first).toFixed(2)} ${top}V${bottom}`)
      .join("");
  return (
    <svg aria-hidden="true" className="pointer-events-none absolute inset-0 h-full w-full" viewBox={`0 0 ${width.toFixed(2)} 40`} preserveAspectRatio="none">
      <path d={path(sessions.heartbeat.buckets, 31, 37)} className="stroke-zinc-400" strokeWidth={1} vectorEffect="non-scaling-stroke" />
      <path d={path(sessions.session_started.buckets, 26, 38)} className="stroke-emerald-600" strokeWidth={2} vectorEffect="non-scaling-stroke" />
      <path d={path(sessions.session_ended.buckets, 26, 38)} className="stroke-zinc-600 dark:stroke-zinc-300" strokeWidth={2} vectorEffect="non-scaling-stroke" />
    </svg>
  );
}

function sessionSummary(sessions: TimelineLaneDto["sessions"]): string | null {
  const parts = [
    sessions.session_started.count ? `${sessions.session_started.count} started` : null,
    sessions.heartbeat.count ? `${sessions.heartbeat.count} ${sessions.heartbeat.count === 1 ? "heartbeat" : "heartbeats"}` : null,
    sessions.session_ended.count ? `${sessions.session_ended.count} ended` : null,
  ].filter(Boolean);
  return parts.length ? `Agent sessions: ${parts.join(", ")}.` : null;
}

interface Tip {
  marker: number;
  rect: DOMRect;
}

/** The tooltip of the hovered or focused marker, over everything (fixed, outside the scrolling lanes), inside the viewport. */
function MarkerTooltip({ id, marker, rect }: { id: string; marker: TimelineMarker; rect: DOMRect }) {
  const ref = useRef<HTMLDivElement>(null);
  const [place, setPlace] = useState<{ left: number; top: number } | null>(null);
  // Synchronises with the DOM: the tooltip's size is known once it is laid out, before it is painted.
  useLayoutEffect(() => {
    const element = ref.current;
    if (!element) return;
    const size = { width: element.offsetWidth, height: element.offsetHeight };
    const next = tooltipPlace(rect, size, { width: document.documentElement.clientWidth, height: window.innerHeight });
    setPlace((current) => (current && current.left === next.left && current.top === next.top ? current : next));
  }, [rect, marker]);
  return createPortal(
    <div
      ref={ref}
      id={id}
      role="tooltip"
      className="pointer-events-none fixed z-50 max-w-[min(24rem,calc(100vw-16px))] rounded-md bg-zinc-900 px-2.5 py-1.5 text-xs text-white shadow-lg dark:bg-zinc-100 dark:text-zinc-900"
      style={place ? { left: place.left, top: place.top } : { left: 0, top: 0, visibility: "hidden" }}
    >
      <p className="font-semibold">
        <AgentText text={marker.label} />
      </p>
      {marker.detail ? (
        <p className="mt-0.5 break-words whitespace-pre-wrap">
          <AgentText text={marker.detail} multiline />
        </p>
      ) : null}
    </div>,
    document.body,
  );
}

const MOVES: Record<string, "prev" | "next" | "first" | "last" | "up" | "down"> = {
  ArrowLeft: "prev",
  ArrowRight: "next",
  Home: "first",
  End: "last",
  ArrowUp: "up",
  ArrowDown: "down",
};

/**
 * One thread's lane: its label (a link to the thread), and on the shared time
 * axis its versions (coloured by severity), people's decisions (diamonds) and
 * session reports (ticks). The markers are links with one tab stop per lane;
 * arrow keys move between them and to the lanes above and below.
 */
export const TimelineLane = memo(function TimelineLane({ lane, index, from, to, sessionBucketMs, current, onMove, onFocusMarker }: TimelineLaneProps) {
  const markers = laneMarkers(lane, from, to);
  const tipId = useId();
  const [tip, setTip] = useState<Tip | null>(null);
  const tabStop = current !== null && current < markers.length ? current : markers.length - 1;
  const where = [lane.project, lane.branch, lane.topic].filter(Boolean);
  const sessions = sessionSummary(lane.sessions);

  const show = (marker: number, element: HTMLElement) => setTip({ marker, rect: element.getBoundingClientRect() });
  const onKeyDown = (event: KeyboardEvent<HTMLAnchorElement>, marker: number) => {
    if (event.key === "Escape") {
      setTip(null);
      return;
    }
    const move = MOVES[event.key];
    if (!move || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    event.preventDefault();
    if (move === "up" || move === "down") return onMove(index, move);
    const target = { prev: marker - 1, next: marker + 1, first: 0, last: markers.length - 1 }[move];
    onMove(index, Math.max(0, Math.min(markers.length - 1, target)));
  };

  return (
    <div className="flex h-10 items-center border-b border-line" data-lane-index={index} data-thread-key={lane.key}>
      <div className="sticky left-0 z-[1] w-36 shrink-0 truncate bg-canvas pr-2 pl-1 text-xs sm:w-48 md:w-64">
        <ThreadLink threadKey={lane.key} title={visibleText(lane.key)} className="rounded-sm hover:underline focus-visible:outline-2 focus-visible:outline-focus">
          <AgentText className="font-medium" text={lane.agent ?? lane.key} />
          {where.length ? (
            <span className="text-muted">
              {" "}
              · <AgentTextList items={where} separator="/" />
            </span>
          ) : null}
        </ThreadLink>
        {lane.versions_omitted ? <span className="block text-[10px] text-muted">{lane.versions_omitted} older versions not drawn</span> : null}
      </div>
      <div className={`relative mx-2 h-full flex-1 ${TRACK_MARKERS}`}>
        <SessionTicks sessions={lane.sessions} from={from} to={to} bucketMs={sessionBucketMs} />
        {sessions ? <span className="sr-only">{sessions}</span> : null}
        {markers.map((marker, position) => (
          <Link
            key={marker.key}
            href={marker.href}
            prefetch={false}
            data-marker-index={position}
            data-marker-kind={marker.kind}
            tabIndex={position === tabStop ? 0 : -1}
            aria-label={visibleText(marker.label)}
            aria-describedby={tip?.marker === position ? tipId : undefined}
            className={markerClass(marker)}
            style={{ left: `${(marker.x * 100).toFixed(3)}%` }}
            onMouseEnter={(event) => show(position, event.currentTarget)}
            onMouseLeave={() => setTip(null)}
            onFocus={(event) => {
              onFocusMarker(index, position);
              show(position, event.currentTarget);
            }}
            onBlur={() => setTip(null)}
            onKeyDown={(event) => onKeyDown(event, position)}
          />
        ))}
        {tip && markers[tip.marker] ? <MarkerTooltip id={tipId} marker={markers[tip.marker]!} rect={tip.rect} /> : null}
      </div>
    </div>
  );
});
