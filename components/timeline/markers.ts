import type { TimelineLaneDto } from "@/lib/views/timeline/dto";
import { formatMoment, positionOf } from "@/lib/views/timeline/window";
import { threadHref } from "@/lib/views/threads/href";

/** A marker of a lane, in time order: a version (coloured by severity) or a person's decision. */
export interface TimelineMarker {
  kind: "version" | "decision";
  key: string;
  /** Where it sits on the lane, 0 (the window's start) to 1 (now). */
  x: number;
  at: number;
  href: string;
  /** What a screen reader says, and the tooltip's first line. */
  label: string;
  /** The tooltip's body (a version's next_action), or null. */
  detail: string | null;
  severity: TimelineLaneDto["versions"][number]["highest_severity"];
  action: TimelineLaneDto["decisions"][number]["action"] | null;
}

const laneName = (lane: TimelineLaneDto) => (lane.agent ? `${lane.agent} (${lane.key})` : lane.key);

/** The thread page, showing that version in its diff. */
export const versionHref = (key: string, packetId: string) => `${threadHref(key)}?to=${encodeURIComponent(packetId)}`;

const cache = new WeakMap<TimelineLaneDto, { from: number; to: number; markers: TimelineMarker[] }>();

/** A lane's markers, oldest first (computed once per lane object and window). */
export function laneMarkers(lane: TimelineLaneDto, from: number, to: number): TimelineMarker[] {
  const cached = cache.get(lane);
  if (cached && cached.from === from && cached.to === to) return cached.markers;
  const name = laneName(lane);
  const numbers = new Map(lane.versions.map((version) => [version.id, version.number]));
  const versions: TimelineMarker[] = lane.versions.map((version) => {
    const at = Date.parse(version.at);
    // Both times when the agent's differs from Baton's: a late packet is placed when it was made.
    const when =
      version.at_source === "agent"
        ? `${formatMoment(version.at)} agent time, received ${formatMoment(version.received_at)}`
        : `${formatMoment(version.received_at)} received`;
    return {
      kind: "version",
      key: `v:${version.id}`,
      x: positionOf(at, from, to),
      at,
      href: versionHref(lane.key, version.id),
      label: `Version ${version.number} of ${name}: ${version.highest_severity ?? "no risks"}, ${when}`,
      detail: version.next_action ?? "no next action",
      severity: version.highest_severity,
      action: null,
    };
  });
  const decisions: TimelineMarker[] = lane.decisions.map((decision, index) => {
    const at = Date.parse(decision.at);
    const number = numbers.get(decision.packet_id);
    const verb = decision.action === "approved" ? "Approved" : "Intervened";
    return {
      kind: "decision",
      key: `d:${decision.packet_id}:${index}`,
      x: positionOf(at, from, to),
      at,
      href: versionHref(lane.key, decision.packet_id),
      label: `${verb}${decision.by ? ` by ${decision.by}` : ""}${number ? ` on version ${number}` : ""} of ${name}, ${formatMoment(decision.at)}`,
      detail: null,
      severity: null,
      action: decision.action,
    };
  });
  // A window the browser slid past older markers leaves them out (the server's next read would).
  const markers = [...versions, ...decisions].filter((marker) => marker.at >= from).sort((a, b) => a.at - b.at || a.key.localeCompare(b.key));
  cache.set(lane, { from, to, markers });
  return markers;
}

/** The marker of `markers` nearest in time to `at` (for moving between lanes). */
export function nearestMarker(markers: TimelineMarker[], at: number): number {
  let best = -1;
  for (const [index, marker] of markers.entries()) {
    if (best < 0 || Math.abs(marker.at - at) < Math.abs(markers[best]!.at - at)) best = index;
  }
  return best;
}
