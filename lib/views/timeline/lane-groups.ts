/** The timeline's lanes as rows to draw (client-safe): grouped by project, quiet lanes folded, so hundreds stay scannable. */

import type { TimelineLaneDto } from "./dto";

/** A row of the lanes list: a project's header, a lane, or the fold of a group's quiet lanes. */
export type LaneRow =
  | { kind: "group"; group: string; label: string | null; lanes: number; quiet: number; open: boolean }
  | { kind: "lane"; lane: number; key: string }
  | { kind: "quiet"; group: string; count: number; shown: boolean };

export interface LaneRowOptions {
  from: number;
  bucketMs: number;
  /** A header per project (when there is more than one). */
  grouped: boolean;
  /** Groups folded shut by the person. */
  closed: ReadonlySet<string>;
  /** Groups whose quiet lanes the person opened. */
  quietShown: ReadonlySet<string>;
}

/** Nothing in the window: no version, decision or session report since `from`. */
export function isQuietLane(lane: TimelineLaneDto, from: number, bucketMs: number): boolean {
  const firstSpan = Math.floor(from / bucketMs);
  const sessions = Object.values(lane.sessions).some((ticks) => ticks.buckets.some((span) => span >= firstSpan));
  return !sessions && !lane.versions.some((version) => Date.parse(version.at) >= from) && !lane.decisions.some((decision) => Date.parse(decision.at) >= from);
}

const groupOf = (lane: TimelineLaneDto) => lane.project ?? "";

/**
 * The rows for `lanes` (in the server's order, the most recently active first): groups in the
 * order of their most recent lane, those with nothing in the window last; in each its active
 * lanes then its quiet ones behind one fold. `visible` lists the lanes drawn, in row order (the keyboard moves through it).
 */
export function laneRows(lanes: readonly TimelineLaneDto[], options: LaneRowOptions): { rows: LaneRow[]; visible: TimelineLaneDto[] } {
  const groups = new Map<string, { active: TimelineLaneDto[]; quiet: TimelineLaneDto[] }>();
  for (const lane of lanes) {
    const key = options.grouped ? groupOf(lane) : "";
    const group = groups.get(key) ?? { active: [], quiet: [] };
    (isQuietLane(lane, options.from, options.bucketMs) ? group.quiet : group.active).push(lane);
    groups.set(key, group);
  }
  const headers = options.grouped && groups.size > 1;
  const rows: LaneRow[] = [];
  const visible: TimelineLaneDto[] = [];
  const push = (lane: TimelineLaneDto) => {
    rows.push({ kind: "lane", lane: visible.length, key: lane.key });
    visible.push(lane);
  };
  // Groups with something in the window first: a project gone quiet is one folded row at the end.
  const ordered = [...groups].sort(([, a], [, b]) => Number(!a.active.length) - Number(!b.active.length));
  for (const [group, { active, quiet }] of ordered) {
    const open = !headers || !options.closed.has(group);
    if (headers) rows.push({ kind: "group", group, label: group || null, lanes: active.length + quiet.length, quiet: quiet.length, open });
    if (!open) continue;
    active.forEach(push);
    if (!quiet.length) continue;
    const shown = options.quietShown.has(group);
    rows.push({ kind: "quiet", group, count: quiet.length, shown });
    if (shown) quiet.forEach(push);
  }
  return { rows, visible };
}
