import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Person } from "../../auth/roles";
import { createFirstAdmin } from "../../auth/users";
import { decide } from "../../human/actions";
import { ingestPacket, type IngestSource } from "../../ingest/ingest";
import { recordLedgerEvents } from "../../events/ledger";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { getThreadDetail } from "../threads/queries";
import { scheduleWriteBack } from "../../human/writeback/write-human-section";
import { TIMELINE_FEED_PAGE, timelineFeedQuerySchema, timelineQuerySchema } from "./dto";
import { listTimelineFeed } from "./feed";
import { loadTimeline } from "./queries";

freshDatabaseForThisFile();

const http: IngestSource = { kind: "http", actor: "token:test" };
const HOUR = 3_600_000;
// On a round hour (the spans of session ticks count from it), one to two hours ahead of the clock:
// people's decisions are stamped with the real time and must fall inside the window.
const NOW = new Date((Math.ceil(Date.now() / HOUR) + 1) * HOUR);
const hoursAgo = (hours: number) => new Date(NOW.getTime() - hours * HOUR);

let sequence = 0;
function packet(thread: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  sequence++;
  return {
    thread,
    agent: "tl-bot",
    project: "tl/pay",
    branch: "main",
    summary: `step ${sequence}`,
    open_risks: [],
    next_action: `next step ${sequence}`,
    ...extra,
  };
}

const timeline = (query: Record<string, unknown>, now = NOW, lanes?: number) => loadTimeline(timelineQuerySchema.parse(query), { now, lanes });
const laneKeys = async (query: Record<string, unknown>) => (await timeline(query)).lanes.map((lane) => lane.key);

let admin: Person;
const ids: Record<string, string> = {};

beforeAll(async () => {
  admin = await createFirstAdmin({ username: "tl-admin", password: "a long enough password" });
  // Three versions of tl/refunds: 30 h ago (outside 24 h), 5 h ago, 1 h ago.
  ids.r1 = (await ingestPacket(packet("tl/refunds", { open_risks: [{ severity: "low", detail: "a" }] }), http, hoursAgo(30))).packet_id;
  ids.r2 = (await ingestPacket(packet("tl/refunds", { open_risks: [{ severity: "critical", detail: "b" }], next_action: "review the prod plan" }), http, hoursAgo(5))).packet_id;
  ids.r3 = (await ingestPacket(packet("tl/refunds", { open_risks: [{ severity: "medium", detail: "c" }] }), http, hoursAgo(1))).packet_id;
  // A late packet (created before r2) arriving last: numbered by the thread's order, not by arrival.
  ids.late = (await ingestPacket(packet("tl/refunds", { created_at: hoursAgo(6).toISOString() }), http, hoursAgo(0.5))).packet_id;
  // Another project, and an archived thread.
  ids.w1 = (await ingestPacket(packet("tl/web", { project: "tl/web", agent: "web-bot" }), http, hoursAgo(2))).packet_id;
  await ingestPacket(packet("tl/gone", { status: "archived" }), http, hoursAgo(2));
  await decide(admin, "tl/web", { kind: "approved", packet_id: ids.w1, base_revision: 0 });
  // Session reports: within the window, one outside.
  await recordLedgerEvents([
    { kind: "session_started", threadKey: "tl/web", actor: "token:test", at: hoursAgo(3) },
    { kind: "heartbeat", threadKey: "tl/web", actor: "token:test", at: hoursAgo(2.99) },
    { kind: "heartbeat", threadKey: "tl/web", actor: "token:test", at: hoursAgo(2.95) },
    { kind: "heartbeat", threadKey: "tl/web", actor: "token:test", at: hoursAgo(1) },
    { kind: "session_ended", threadKey: "tl/web", actor: "token:test", at: hoursAgo(0.9) },
    { kind: "heartbeat", threadKey: "tl/web", actor: "token:test", at: hoursAgo(40) },
  ]);
});

afterAll(async () => {
  await scheduleWriteBack(["tl/web"]);
});

describe("loadTimeline", () => {
  it("has one lane per active thread, the most recently active first, within the window", async () => {
    const dto = await timeline({ window: "24h" });
    expect(dto.from).toBe(hoursAgo(24).toISOString());
    expect(dto.to).toBe(NOW.toISOString());
    expect(dto.lanes.map((lane) => lane.key)).toEqual(["tl/refunds", "tl/web"]);
    expect(dto.lanes_total).toBe(2);
    expect(dto.lanes[0]).toMatchObject({ agent: "tl-bot", project: "tl/pay", branch: "main", topic: null });
  });

  it("marks each version in the window by the agent's time (received time without one) with its number, severity and next action, oldest first", async () => {
    const [refunds] = (await timeline({ window: "24h" })).lanes;
    const received = (hours: number) => ({ received_at: hoursAgo(hours).toISOString(), at: hoursAgo(hours).toISOString(), at_source: "received" });
    expect(refunds!.versions).toEqual([
      // Made 6 h ago, received half an hour ago: placed when it was made, both times told.
      { id: ids.late, number: 2, received_at: hoursAgo(0.5).toISOString(), at: hoursAgo(6).toISOString(), at_source: "agent", highest_severity: null, next_action: expect.stringMatching(/^next step/) },
      { id: ids.r2, number: 3, ...received(5), highest_severity: "critical", next_action: "review the prod plan" },
      { id: ids.r3, number: 4, ...received(1), highest_severity: "medium", next_action: expect.stringMatching(/^next step/) },
    ]);
    expect(refunds!.versions_omitted).toBe(0);
    // The same numbers as the thread page's v1..vN (newest first there).
    const detail = await getThreadDetail("tl/refunds");
    const numbers = Object.fromEntries(detail.versions.map((version, index) => [version.id, detail.versions.length - index]));
    for (const version of refunds!.versions) expect(version.number).toBe(numbers[version.id]);

    const wider = (await timeline({ window: "7d" })).lanes[0]!;
    expect(wider.versions.map((version) => version.id)).toEqual([ids.r1, ids.late, ids.r2, ids.r3]);
  });

  it("marks people's decisions and session reports, ticks of a kind close together merged", async () => {
    const day = await timeline({ window: "24h" });
    const web = day.lanes.find((lane) => lane.key === "tl/web")!;
    // Spans count from the epoch: NOW is on a round hour, so the window's first span is a whole one.
    const fromWindowStart = (dto: typeof day, buckets: number[]) => buckets.map((bucket) => bucket + Date.parse(dto.from) / dto.session_bucket_ms);
    expect(web.decisions).toEqual([{ packet_id: ids.w1, action: "approved", at: expect.any(String), by: "tl-admin" }]);
    // 24 h in 240 spans of 6 minutes, numbered from the window's start: 3 h ago is span 210. Reports are
    // grouped by their ten minutes first: the two heartbeats 2.4 minutes apart share a span, and the
    // session's end 6 minutes after a heartbeat falls in that heartbeat's span (6 h: by the minute, two ticks).
    expect(web.sessions).toEqual({
      session_started: { buckets: fromWindowStart(day, [210]), count: 1 },
      heartbeat: { buckets: fromWindowStart(day, [210, 230]), count: 3 },
      session_ended: { buckets: fromWindowStart(day, [230]), count: 1 },
    });
    const six = await timeline({ window: "6h" });
    const sixHours = six.lanes.find((lane) => lane.key === "tl/web")!;
    expect(sixHours.sessions.heartbeat).toEqual({ buckets: fromWindowStart(six, [120, 122, 200]), count: 3 });
    expect(day).toMatchObject({ session_buckets: 240, session_bucket_ms: 6 * 60_000 });
  });

  it("sends only the first lanes for a first paint, and says so", async () => {
    const first = await timeline({ window: "24h" }, NOW, 1);
    expect(first.lanes.map((lane) => lane.key)).toEqual(["tl/refunds"]);
    expect(first).toMatchObject({ lanes_total: 2, complete: false });
    // The feed is of every thread all the same.
    expect(new Set(first.feed.events.map((event) => event.thread_key))).toEqual(new Set(["tl/refunds", "tl/web"]));
    expect((await timeline({ window: "24h" })).complete).toBe(true);
  });

  it("applies the board's filters", async () => {
    expect(await laneKeys({ project: "tl/web" })).toEqual(["tl/web"]);
    expect(await laneKeys({ q: "REFUNDS" })).toEqual(["tl/refunds"]);
    expect(await laneKeys({ severity: "medium" })).toEqual(["tl/refunds"]);
    expect(await laneKeys({ q: "nothing matches this" })).toEqual([]);
    // Flags the board decides when placing a card are the board's answer, at the same time.
    expect(await laneKeys({ flag: "missing_fields" })).toEqual(["tl/refunds", "tl/web"]);
    expect(await laneKeys({ flag: "stale" })).toEqual([]);
    const dayAndAHalfLater = new Date(NOW.getTime() + 36 * HOUR);
    expect((await timeline({ flag: "stale" }, dayAndAHalfLater)).lanes.map((lane) => lane.key)).toEqual(["tl/refunds", "tl/web"]);
    const empty = await timeline({ q: "nothing matches this" });
    expect(empty.feed).toEqual({ events: [], next_cursor: null });
  });

  it("rejects a window it does not know", () => {
    expect(timelineQuerySchema.safeParse({ window: "2d" }).success).toBe(false);
    expect(timelineQuerySchema.parse({}).window).toBe("24h");
  });
});

describe("the feed", () => {
  it("lists the ledger of the timeline's threads in words, newest first, without heartbeats", async () => {
    const { feed } = await timeline({ window: "24h" });
    expect(feed.next_cursor).toBeNull();
    const seqs = feed.events.map((event) => event.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
    expect(new Set(feed.events.map((event) => event.thread_key))).toEqual(new Set(["tl/refunds", "tl/web"]));
    expect(feed.events.map((event) => event.kind)).not.toContain("heartbeat");
    expect(feed.events.find((event) => event.kind === "human_approved")).toMatchObject({ thread_key: "tl/web", actor: "tl-admin", text: expect.stringMatching(/^approved the next action/) });
    expect(feed.events.find((event) => event.kind === "session_ended")).toMatchObject({ text: "agent session ended" });
    expect(feed.events.filter((event) => event.kind === "packet_received").map((event) => event.packet_id)).toEqual([ids.w1, ids.late, ids.r3, ids.r2]);
    // Only the filtered threads.
    const web = await timeline({ project: "tl/web" });
    expect(new Set(web.feed.events.map((event) => event.thread_key))).toEqual(new Set(["tl/web"]));
  });

  it("pages by seq cursor", async () => {
    const key = "tl/busy";
    for (let index = 0; index < TIMELINE_FEED_PAGE + 5; index++) {
      await ingestPacket(packet(key), http, new Date(hoursAgo(3).getTime() + index * 1000));
    }
    const first = (await timeline({ q: "tl/busy" })).feed;
    expect(first.events).toHaveLength(TIMELINE_FEED_PAGE);
    expect(first.next_cursor).toBe(first.events.at(-1)!.seq);
    const second = await listTimelineFeed(timelineFeedQuerySchema.parse({ q: "tl/busy", before: String(first.next_cursor) }), NOW);
    // 55 packets: 55 received and 54 superseded events.
    expect(second.events).toHaveLength(TIMELINE_FEED_PAGE);
    expect(second.events[0]!.seq).toBeLessThan(first.next_cursor!);
    const third = await listTimelineFeed(timelineFeedQuerySchema.parse({ q: "tl/busy", before: String(second.next_cursor) }), NOW);
    expect(third.events).toHaveLength(2 * (TIMELINE_FEED_PAGE + 5) - 1 - 2 * TIMELINE_FEED_PAGE);
    expect(third.next_cursor).toBeNull();
    const all = [...first.events, ...second.events, ...third.events].map((event) => event.seq);
    expect(new Set(all).size).toBe(all.length);
  });
});
