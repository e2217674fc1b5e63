import { beforeAll, describe, expect, it } from "vitest";
import { inSqlTransaction } from "../../db/client";
import { Prisma } from "../../generated/prisma/client";
import { newId } from "../../db/ids";
import { SEVERITIES } from "../../contract/severity";
import { insertRows } from "../../db/sql";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { TIMELINE_FEED_PAGE, TIMELINE_SESSION_BUCKETS, TIMELINE_VERSIONS_PER_LANE_MAX, timelineQuerySchema } from "./dto";
import { loadTimeline } from "./queries";

/**
 * "200 lanes over 7 days stay smooth": the DTO for 200 threads with a version
 * every 2 hours and a heartbeat every 10 minutes for 7 days. Rows are written
 * straight into the tables (ingesting 17,000 packets would take the test's
 * time, not the timeline's). No timing assertion: it builds, and it is bounded.
 */

freshDatabaseForThisFile();

const THREADS = 200;
const DAYS = 7;
const VERSION_EVERY_MS = 2 * 3_600_000;
const HEARTBEAT_EVERY_MS = 10 * 60_000;
const NOW = new Date("2026-11-29T12:00:00.000Z");
const START = NOW.getTime() - DAYS * 86_400_000;

const VERSION_COLUMNS = [
  "id", "threadId", "contentHash", "receivedJson", "canonicalJson", "source", "receivedAt", "sortAt", "flags",
  "nextAction", "highestSeverity", "riskCounts", "questionCount",
] as const;
const THREAD_COLUMNS = ["id", "key", "archived", "activeVersionId", "activeSortAt", "activeReceivedAt", "agent", "project", "branch", "createdAt", "updatedAt"] as const;
const EVENT_COLUMNS = ["at", "kind", "threadKey", "versionId", "actor", "data"] as const;

beforeAll(async () => {
  // Raw statements only: on PostgreSQL they go straight to the driver adapter, not through
  // Prisma's per-statement pipeline (decision 083), which cost more than the inserts themselves.
  await inSqlTransaction(async (sql) => {
    const threads: unknown[][] = [];
    const versions: unknown[][] = [];
    const events: unknown[][] = [];
    for (let index = 0; index < THREADS; index++) {
      const threadId = newId("th", START);
      const key = `scale/${index}`;
      let last: { id: string; at: Date } | null = null;
      // Every thread's versions start at a different time: markers do not all line up.
      for (let at = START + 1 + index * 30_000; at <= NOW.getTime(); at += VERSION_EVERY_MS) {
        const id = newId("pv", at);
        const when = new Date(at);
        const severity = SEVERITIES[(index + versions.length) % SEVERITIES.length]!;
        versions.push([id, threadId, id, "{}", "{}", "http", when, when, "[]", `next action ${versions.length}`, severity, "{}", 0]);
        events.push([when, "packet_received", key, id, "token:scale", "{}"]);
        last = { id, at: when };
      }
      for (let at = START + 1 + index * 1_000; at <= NOW.getTime(); at += HEARTBEAT_EVERY_MS) {
        events.push([new Date(at), "heartbeat", key, last!.id, "token:scale", "{}"]);
      }
      threads.push([threadId, key, false, last!.id, last!.at, last!.at, `agent-${index % 20}`, `project-${index % 7}`, "main", new Date(START), last!.at]);
    }
    // Threads first without their active version (it refers to a version that refers to the thread).
    await insertRows(sql, "Thread", THREAD_COLUMNS, threads.map((row) => [...row.slice(0, 3), null, null, null, ...row.slice(6)]));
    await insertRows(sql, "PacketVersion", VERSION_COLUMNS, versions);
    for (const row of threads) {
      await sql.execute(Prisma.sql`UPDATE "Thread" SET "activeVersionId" = ${row[3]}, "activeSortAt" = ${row[4]}, "activeReceivedAt" = ${row[5]} WHERE "id" = ${row[0]}`);
    }
    // Ledger events in time order, as they would have been appended.
    events.sort((a, b) => (a[0] as Date).getTime() - (b[0] as Date).getTime());
    await insertRows(sql, "LedgerEvent", EVENT_COLUMNS, events);
    // Tens of thousands of rows: longer than a request's transaction may take on a loaded machine.
  }, { timeoutMs: 110_000 });
}, 120_000);

describe("the timeline of 200 threads over 7 days", () => {
  it("builds one lane per thread with every version and bounded session ticks", async () => {
    const started = performance.now();
    const dto = await loadTimeline(timelineQuerySchema.parse({ window: "7d" }), { now: NOW });
    const elapsed = performance.now() - started;
    const json = JSON.stringify(dto);
    console.log(`timeline 200 × 7 d: ${elapsed.toFixed(0)} ms, ${(json.length / 1024).toFixed(0)} KiB`);

    expect(dto.lanes).toHaveLength(THREADS);
    expect(dto.complete).toBe(true);
    const versions = dto.lanes.reduce((sum, lane) => sum + lane.versions.length, 0);
    expect(versions).toBe(THREADS * 84);
    for (const lane of dto.lanes) {
      expect(lane.versions.length).toBeLessThanOrEqual(TIMELINE_VERSIONS_PER_LANE_MAX);
      expect(lane.versions.map((version) => version.number)).toEqual(lane.versions.map((_, index) => index + 1));
      // A heartbeat every 10 minutes, grouped by the hour for 7 days: one tick an hour, whatever the rate.
      expect(lane.sessions.heartbeat.buckets).toHaveLength(7 * 24);
      expect(Math.max(...lane.sessions.heartbeat.buckets) - Math.floor(Date.parse(dto.from) / dto.session_bucket_ms)).toBeLessThan(TIMELINE_SESSION_BUCKETS + 1);
      expect(lane.sessions.heartbeat.count).toBe(1008);
    }
    expect(dto.feed.events).toHaveLength(TIMELINE_FEED_PAGE);
    expect(dto.feed.events.every((event) => event.kind === "packet_received")).toBe(true);
    // Bounded: about 150 bytes a version marker, a few a tick.
    expect(json.length).toBeLessThan(4 * 1024 * 1024);
  });

  it("sends a first paint of a few lanes, and narrows to the filters", async () => {
    const first = await loadTimeline(timelineQuerySchema.parse({ window: "7d" }), { now: NOW, lanes: 20 });
    expect(first.lanes).toHaveLength(20);
    expect(first).toMatchObject({ lanes_total: THREADS, complete: false });
    expect(JSON.stringify(first).length).toBeLessThan(400 * 1024);

    const one = await loadTimeline(timelineQuerySchema.parse({ window: "30d", project: "project-3", agent: "agent-3" }), { now: NOW });
    expect(one.lanes.map((lane) => lane.key).sort()).toEqual(["scale/143", "scale/3"]);
  });
});
