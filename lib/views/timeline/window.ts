/** The timeline's time windows and its axis (client-safe): the server and the browser compute the same ticks. */

import { formatMoment, MONTHS, pad2 } from "../../browser/moment";

export const TIMELINE_WINDOWS = ["6h", "24h", "7d", "30d"] as const;
export type TimelineWindow = (typeof TIMELINE_WINDOWS)[number];
export const DEFAULT_TIMELINE_WINDOW: TimelineWindow = "24h";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export const WINDOW_MS: Record<TimelineWindow, number> = { "6h": 6 * HOUR, "24h": 24 * HOUR, "7d": 7 * DAY, "30d": 30 * DAY };
export const WINDOW_LABELS: Record<TimelineWindow, string> = { "6h": "6 hours", "24h": "24 hours", "7d": "7 days", "30d": "30 days" };

/** Between two axis ticks: about six to eight labels whatever the window. */
const TICK_STEP_MS: Record<TimelineWindow, number> = { "6h": HOUR, "24h": 3 * HOUR, "7d": DAY, "30d": 5 * DAY };

/** "14:00" within a day, "Nov 29" at midnight and for day ticks: UTC, so every browser and the server agree. */
export function tickLabel(at: number, window: TimelineWindow): string {
  const date = new Date(at);
  const day = `${MONTHS[date.getUTCMonth()]} ${date.getUTCDate()}`;
  if (window === "7d" || window === "30d") return day;
  return date.getUTCHours() === 0 ? day : `${pad2(date.getUTCHours())}:00`;
}

/** "Nov 29 14:05 UTC": a marker's time in tooltips and labels. */
export { formatMoment };

/** Where `at` sits between `from` and `to`, from 0 to 1 (clamped). */
export function positionOf(at: number, from: number, to: number): number {
  if (to <= from) return 1;
  return Math.min(1, Math.max(0, (at - from) / (to - from)));
}

/** Ticks on round UTC hours or days inside [from, to], oldest first. */
export function axisTicks(window: TimelineWindow, from: number, to: number): { at: number; label: string }[] {
  const step = TICK_STEP_MS[window];
  // Day steps count from the Unix epoch's midnight, which is a UTC midnight: ticks land on round days.
  const first = Math.ceil(from / step) * step;
  const ticks: { at: number; label: string }[] = [];
  for (let at = first; at <= to; at += step) ticks.push({ at, label: tickLabel(at, window) });
  return ticks;
}
