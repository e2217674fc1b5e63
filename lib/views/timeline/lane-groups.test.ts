import { describe, expect, it } from "vitest";
import type { TimelineLaneDto } from "./dto";
import { laneRows } from "./lane-groups";

const HOUR = 3_600_000;
const FROM = Date.UTC(2026, 11, 1, 0, 0);
const BUCKET = 6 * 60_000;
const noTicks = { buckets: [], count: 0 };

function lane(key: string, project: string | null, activeAt: number | null, heartbeatAt: number | null = null): TimelineLaneDto {
  const at = activeAt === null ? null : new Date(activeAt).toISOString();
  return {
    key,
    active_at: new Date(FROM).toISOString(),
    agent: null,
    project,
    branch: null,
    topic: null,
    versions: at ? [{ id: `v-${key}`, number: 1, received_at: at, at, at_source: "received", highest_severity: null, next_action: null }] : [],
    versions_omitted: 0,
    decisions: [],
    sessions: { session_started: noTicks, session_ended: noTicks, heartbeat: heartbeatAt === null ? noTicks : { buckets: [Math.floor(heartbeatAt / BUCKET)], count: 1 } },
  };
}

const lanes = [
  lane("a1", "alpha", FROM + 5 * HOUR),
  lane("b1", "beta", FROM + 4 * HOUR),
  // Its only version is older than the window: quiet.
  lane("a2", "alpha", FROM - HOUR),
  lane("b2", "beta", null, FROM + HOUR),
  lane("n1", null, null),
  lane("q1", "quiet", FROM - 2 * HOUR),
];
const options = { from: FROM, bucketMs: BUCKET, grouped: true, closed: new Set<string>(), quietShown: new Set<string>() };
const shape = (rows: ReturnType<typeof laneRows>["rows"]) =>
  rows.map((row) => (row.kind === "group" ? `# ${row.label ?? "-"} ${row.lanes}/${row.quiet}` : row.kind === "quiet" ? `~ ${row.count}` : `${row.lane}:${row.key}`));

describe("laneRows", () => {
  it("groups by project in the order of each group's most recent lane, a quiet group last, quiet lanes folded", () => {
    const { visible } = laneRows(lanes, options);
    // A heartbeat in the window is activity: b2 is not quiet. The quiet project, the most recent, goes after the active ones.
    expect(shape(laneRows([lanes[5]!, ...lanes.slice(0, 5)], options).rows)).toEqual(["# alpha 2/1", "0:a1", "~ 1", "# beta 2/0", "1:b1", "2:b2", "# quiet 1/1", "~ 1", "# - 1/1", "~ 1"]);
    expect(visible.map((each) => each.key)).toEqual(["a1", "b1", "b2"]);
  });

  it("opens a group's quiet lanes, folds a group shut, and draws no header for one group", () => {
    const opened = laneRows(lanes.slice(0, 5), { ...options, quietShown: new Set(["alpha"]), closed: new Set(["beta"]) });
    expect(shape(opened.rows)).toEqual(["# alpha 2/1", "0:a1", "~ 1", "1:a2", "# beta 2/0", "# - 1/1", "~ 1"]);
    expect(shape(laneRows(lanes, { ...options, grouped: false }).rows)).toEqual(["0:a1", "1:b1", "2:b2", "~ 3"]);
    expect(shape(laneRows(lanes.slice(0, 1), options).rows)).toEqual(["0:a1"]);
  });
});
