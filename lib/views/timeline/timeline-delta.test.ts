import { beforeAll, describe, expect, it } from "vitest";
import type { InfiniteData } from "@tanstack/react-query";
import { closeStreams, expectStreamRefused, openStream, openViewers, readAfter } from "@/testing/view-streams";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { createApiToken } from "../../auth/tokens";
import { createFirstAdmin } from "../../auth/users";
import type { Person } from "../../auth/roles";
import { THREADLESS_KINDS } from "../../events/dto";
import { recordLedgerEvents } from "../../events/ledger";
import { eventsAfter, headSeq, readDelta } from "@/testing/ledger-deltas";
import { sharedFramesMade } from "../../events/shared-frames";
import { decide } from "../../human/actions";
import { ingestPacket } from "../../ingest/ingest";
import { applyTimelineDelta, applyTimelineFeedDelta, feedNeedsRefetch } from "../../browser/timeline-delta";
import { timelineDeltaDto, timelineQuerySchema, type TimelineDeltaDto, type TimelineDto, type TimelineFeedDto } from "./dto";
import { loadTimeline } from "./queries";
import { computeTimelineDelta } from "./timeline-delta";

freshDatabaseForThisFile();

const HOUR = 3_600_000;
// An hour ahead of the clock: people's decisions are stamped with the real time and fall inside the window.
const NOW = new Date(Date.now() + HOUR);
let token: string;
let person: Person;

beforeAll(async () => {
  token = (await createApiToken("timeline-viewer", ["packets:read"])).token;
  person = await createFirstAdmin({ username: "timeline-admin", password: "a long enough password" });
});

// Within the last day, a minute apart.
let arrival = Date.now() - 20 * HOUR;
async function ingest(thread: string, fields: Record<string, unknown> = {}) {
  arrival += 60_000;
  const result = await ingestPacket({ thread, summary: `work on ${thread}`, next_action: `next for ${thread} at ${arrival}`, project: "tl-delta", ...fields }, { kind: "http", actor: "test" }, new Date(arrival));
  return result.packet_id;
}



const query = (params: Record<string, string> = {}) => timelineQuerySchema.parse(params);
const load = (params: Record<string, string> = {}) => loadTimeline(query(params), { now: NOW });
const feedOf = (timeline: TimelineDto): InfiniteData<TimelineFeedDto, number | undefined> => ({ pages: [timeline.feed], pageParams: [undefined] });
/** The timeline as a person sees it: when it was made aside, and the feed (held apart by the browser) left out. */
const shown = (timeline: TimelineDto) => ({ ...timeline, generated_at: "", feed: null });

/** Applies what `work` did to `before` as the browser would, and checks the lanes and the feed match a fresh load. */
async function expectDeltaMatchesFreshLoad(params: Record<string, string>, work: () => Promise<unknown>): Promise<{ delta: TimelineDeltaDto; feedRefetched: boolean }> {
  const before = await load(params);
  const from = await headSeq();
  await work();
  const events = await eventsAfter(from);
  expect(events.length).toBeGreaterThan(0);
  const delta = await computeTimelineDelta(events, query(params), NOW);
  const applied = applyTimelineDelta(before, delta);
  expect(applied).not.toBeNull();
  const fresh = await load(params);
  expect(shown(applied!)).toEqual(shown(fresh));
  // Applied twice (a fetch under way when it came), it changes nothing more.
  expect(applyTimelineDelta(applied!, delta)).toEqual(applied);
  // A thread joining with older rows the feed never held: the feed is fetched again instead.
  if (feedNeedsRefetch(delta, new Set(before.lanes.map((lane) => lane.key)))) return { delta, feedRefetched: true };
  const feed = applyTimelineFeedDelta(feedOf(before), delta, new Set(applied!.lanes.map((lane) => lane.key)));
  expect(feed.pages[0]!.events.slice(0, fresh.feed.events.length)).toEqual(fresh.feed.events);
  expect(applyTimelineFeedDelta(feed, delta, null)).toBe(feed);
  return { delta, feedRefetched: false };
}

describe("computeTimelineDelta applied by the browser", () => {
  it("matches a fresh load after new packets, a late packet, a decision, session reports and an archive", async () => {
    for (const thread of ["t-a", "t-b", "t-c"]) await ingest(thread);

    const { delta: moved } = await expectDeltaMatchesFreshLoad({}, () => ingest("t-a", { open_risks: [{ severity: "high", detail: "seen" }] }));
    expect(moved.lanes.map((lane) => lane.key)).toEqual(["t-a"]);
    expect(moved.feed.map((row) => row.kind)).toEqual(["packet_superseded", "packet_received"]);

    // A packet the agent made before the thread's newest: every version's number moves, the lane is sent whole.
    const { delta: late } = await expectDeltaMatchesFreshLoad({}, () => ingest("t-b", { created_at: new Date(Date.now() - 19.9 * HOUR).toISOString() }));
    expect(late.lanes[0]!.versions.map((version) => version.number)).toEqual([1, 2]);

    await expectDeltaMatchesFreshLoad({}, async () => {
      const timeline = await load();
      const lane = timeline.lanes.find((each) => each.key === "t-c")!;
      await decide(person, "t-c", { kind: "approved", packet_id: lane.versions.at(-1)!.id, base_revision: 0 });
    });
    const { delta: sessions } = await expectDeltaMatchesFreshLoad({}, () =>
      recordLedgerEvents([
        { kind: "session_started", threadKey: "t-b", actor: "test", at: new Date(Date.now() - HOUR) },
        { kind: "heartbeat", threadKey: "t-b", actor: "test", at: new Date(Date.now() - HOUR / 2) },
      ]),
    );
    // Heartbeats are ticks on the lane, not feed rows.
    expect(sessions.feed.map((row) => row.kind)).toEqual(["session_started"]);

    const { delta: archived } = await expectDeltaMatchesFreshLoad({}, () => ingest("t-c", { status: "archived" }));
    expect(archived).toMatchObject({ lanes: [], removes: ["t-c"], lanes_total: 2 });
  });

  it("keeps a filtered timeline right: a lane that stops matching goes, one that starts comes, the count follows", async () => {
    await ingest("f-one", { open_risks: [{ severity: "critical", detail: "a critical one" }] });
    await ingest("f-two");
    const { delta: left } = await expectDeltaMatchesFreshLoad({ severity: "critical", window: "7d" }, () => ingest("f-one"));
    expect(left).toMatchObject({ removes: ["f-one"], lanes_total: 0 });
    const { delta: joined, feedRefetched } = await expectDeltaMatchesFreshLoad({ severity: "critical", window: "7d" }, () =>
      ingest("f-two", { open_risks: [{ severity: "critical", detail: "now critical" }] }),
    );
    expect(joined.lanes.map((lane) => lane.key)).toEqual(["f-two"]);
    // Its packet of before is a row the feed never held.
    expect(feedRefetched).toBe(true);
    expect(joined.lanes_total).toBe(1);
    // A flag filter is the board's to decide; its count is the browser's to keep.
    const { delta: flagged, feedRefetched: flaggedFeedRefetched } = await expectDeltaMatchesFreshLoad({ flag: "dirty_state" }, () => ingest("f-dirty", { clean_state: [{ check: "working_tree", detail: "a.ts modified" }] }));
    expect(flagged).toMatchObject({ lanes_total: null });
    expect(flagged.lanes.map((lane) => lane.key)).toEqual(["f-dirty"]);
    // A thread's first packet: nothing older to fetch.
    expect(flaggedFeedRefetched).toBe(false);
  });

  it("is the size of the batch, not of the timeline: one lane for a packet among many threads", async () => {
    for (let index = 0; index < 30; index++) await ingest(`many-${index}`);
    const { delta, feedRefetched } = await expectDeltaMatchesFreshLoad({}, () => ingest("many-7"));
    expect(feedRefetched).toBe(false);
    expect(delta.lanes.map((lane) => lane.key)).toEqual(["many-7"]);
    const timeline = await load();
    expect(JSON.stringify(delta).length * 10).toBeLessThan(JSON.stringify(timeline).length);
  });

  it("changes nothing for events about no lane, asks for a refetch it cannot tell as lanes, and refetches what it cannot place", async () => {
    const from = await headSeq();
    await createApiToken("another", ["packets:read"]);
    const events = await eventsAfter(from);
    expect(await computeTimelineDelta(events, query(), NOW)).toMatchObject({ lanes: [], removes: [], feed: [], refetch: false });
    for (const kind of THREADLESS_KINDS) {
      expect(await computeTimelineDelta([{ ...events[0]!, kind }], query(), NOW), kind).toMatchObject({ lanes: [], removes: [], refetch: false });
    }
    const timeline = await load();
    const unknown = await computeTimelineDelta([{ ...events[0]!, kind: "thread_stale", thread_key: null }], query(), NOW);
    expect(unknown.refetch).toBe(true);
    expect(applyTimelineDelta(timeline, unknown)).toBeNull();
    expect(applyTimelineDelta(timeline, { view: "timeline", lanes: "not lanes" })).toBeNull();

    const moved = await computeTimelineDelta(await eventsAfter(await headSeq().then(async (seq) => (await ingest("t-a"), seq))), query(), NOW);
    // A first paint holds only its first lanes; another window's lanes are read for another span.
    expect(applyTimelineDelta({ ...timeline, complete: false }, moved)).toBeNull();
    expect(applyTimelineDelta({ ...timeline, window: "7d" }, moved)).toBeNull();
    // Capped (more threads match than have lanes): a lane leaving lets in one the browser never had.
    const capped = { ...timeline, lanes_total: timeline.lanes.length + 5 };
    const gone = await computeTimelineDelta(await eventsAfter(await headSeq().then(async (seq) => (await ingest("t-b", { status: "archived" }), seq))), query(), NOW);
    expect(gone.removes).toEqual(["t-b"]);
    expect(applyTimelineDelta(capped, gone)).toBeNull();
    expect(applyTimelineDelta(timeline, gone)!.lanes.map((lane) => lane.key)).not.toContain("t-b");
  });
});


/** The first timeline delta on a stream with a lane for `thread`. */
const deltaFor = async (response: Response, thread: string) =>
  (
    await readDelta(response, (data) => {
      const delta = timelineDeltaDto.parse(data);
      return delta.lanes.some((lane) => lane.key === thread) ? delta : undefined;
    }, thread)
  ).delta;

describe("GET /api/v1/stream?timeline=", () => {
  it("sends every viewer of the same filters the changed lane and the new rows, computed once for all of them", async () => {
    await ingest("s-live");
    const abort = new AbortController();
    const asked = `?timeline=${encodeURIComponent("project=tl-delta")}`;
    const streams = await openViewers(token, asked, 3, abort.signal);
    try {
      const madeBefore = sharedFramesMade();
      const deltas = await readAfter(streams, (response) => deltaFor(response, "s-live"), () => ingest("s-live", { next_action: "seen live by all three" }));
      for (const delta of deltas) {
        expect(delta).toMatchObject({ window: "24h", refetch: false });
        expect(delta.feed.map((row) => row.thread_key)).toEqual(["s-live", "s-live"]);
      }
      expect(sharedFramesMade() - madeBefore).toBe(1);
    } finally {
      await closeStreams(abort, streams);
    }
  });

  it("refuses a window or filters it does not accept, naming the field", async () => {
    const abort = new AbortController();
    const response = await openStream(token, `?timeline=${encodeURIComponent("window=2h")}`, abort.signal);
    await expectStreamRefused(response, "timeline.window");
  });
});
