import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { database } from "../../lib/db/client";
import { SEVERITIES } from "../../lib/contract/severity";
import { useTempDatabase } from "@/testing/temp-database";
import { loadUsage } from "../../lib/views/usage/usage";
import { loadDemoFleet } from "./fleet";

let temp: Awaited<ReturnType<typeof useTempDatabase>>;
let first: Awaited<ReturnType<typeof loadDemoFleet>>;

const HOUR = 3_600_000;
// The fleet is anchored on the hour; ingest stamps packets with the real clock, so stay near it.
const hourStart = Math.floor(Date.now() / HOUR) * HOUR;

beforeAll(async () => {
  temp = await useTempDatabase();
  first = await loadDemoFleet(hourStart + 1_000);
});
afterAll(async () => {
  await temp.dispose();
});

async function activeVersions() {
  const db = await database();
  const threads = await db.thread.findMany({
    where: { archived: false },
    select: { key: true, activeVersion: { select: { id: true, flags: true, highestSeverity: true, summary: true } } },
  });
  return threads.map((thread) => ({ key: thread.key, ...thread.activeVersion! }));
}

describe("loadDemoFleet", () => {
  it("stores at least 30 threads with several versions each", async () => {
    const db = await database();
    const threads = await db.thread.findMany({ select: { id: true, archived: true, _count: { select: { versions: true } } } });
    expect(threads.length).toBeGreaterThanOrEqual(30);
    expect(first.threads).toBe(threads.length);
    expect(first.agents).toBe(threads.length);
    expect(threads.every((thread) => !thread.archived)).toBe(true);
    for (const thread of threads) expect(thread._count.versions).toBeGreaterThanOrEqual(2);
    expect(first.stored).toBe(await db.packetVersion.count());
    expect(first.stored).toBeGreaterThanOrEqual(3 * threads.length);
    expect(await db.ledgerEvent.count({ where: { kind: "packet_received" } })).toBe(first.stored);
  });

  it("leaves each thread's newest session active", async () => {
    const db = await database();
    const threads = await db.thread.findMany({ select: { key: true, activeVersionId: true, versions: { select: { id: true, summary: true } } } });
    for (const thread of threads) {
      const newest = thread.versions.length;
      const active = thread.versions.find((version) => version.id === thread.activeVersionId);
      expect(active?.summary, thread.key).toMatch(new RegExp(`^Session ${newest} of `));
    }
  });

  it("covers all five severities among the active versions' risks", async () => {
    const db = await database();
    const ids = (await activeVersions()).map((version) => version.id);
    const severities = await db.risk.groupBy({ by: ["severity"], where: { versionId: { in: ids } }, _count: true });
    expect(severities.map((row) => row.severity).sort()).toEqual([...SEVERITIES].sort());
    const highest = new Set((await activeVersions()).map((version) => version.highestSeverity));
    expect(highest).toEqual(new Set(["critical", "high", "medium"]));
  });

  it("covers the attention flags among the active versions", async () => {
    const flags = new Set((await activeVersions()).flatMap((version) => (JSON.parse(version.flags) as { code: string }[]).map((flag) => flag.code)));
    for (const code of [
      "open_questions",
      "dirty_state",
      "verdict_failed",
      "missing_next_action",
      "missing_fields",
      "unknown_severity",
      "clock_skew",
    ]) {
      expect(flags, code).toContain(code);
    }
  });

  it("reports usage in each form agents send it, so the usage page has something to show", async () => {
    const db = await database();
    const usage = await loadUsage({ days: 7 });
    // Every project, in dollars; the agents that send plain strings report none.
    expect(usage.by_project.map((row) => row.key).sort()).toEqual(["acme/data", "acme/mobile", "acme/payments", "acme/platform", "acme/web"]);
    expect(usage.by_project.every((row) => row.currency === "USD" && row.cost > 0)).toBe(true);
    const reporting = new Set(usage.by_agent.map((row) => row.key));
    expect(reporting.size).toBeGreaterThan(first.agents / 2);
    expect(reporting.size).toBeLessThan(first.agents);
    // Tokens as input_tokens and as prompt_tokens; durations in milliseconds and in seconds.
    const total = usage.by_project.reduce((sum, row) => ({ input: sum.input + row.input_tokens, duration: sum.duration + row.duration_ms, packets: sum.packets + row.packets }), { input: 0, duration: 0, packets: 0 });
    expect(total.input).toBeGreaterThan(0);
    expect(total.duration).toBeGreaterThan(0);
    expect(total.packets).toBeLessThan(await db.packetVersion.count());
  });

  it("stores nothing new when loaded again in the same hour", async () => {
    const db = await database();
    const before = {
      versions: await db.packetVersion.count(),
      events: await db.ledgerEvent.count(),
      threads: await db.thread.count(),
    };
    const again = await loadDemoFleet(hourStart + HOUR - 1_000);
    expect(again).toEqual({ agents: first.agents, threads: first.threads, stored: 0 });
    expect({
      versions: await db.packetVersion.count(),
      events: await db.ledgerEvent.count(),
      threads: await db.thread.count(),
    }).toEqual(before);
  });
});
