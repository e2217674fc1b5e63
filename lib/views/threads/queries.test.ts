import { beforeAll, describe, expect, it } from "vitest";
import { database } from "../../db/client";
import { BatonError } from "../../core/errors";
import { ingestPacket, type IngestSource } from "../../ingest/ingest";
import { routinePacket } from "@/testing/packets";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { threadListQuerySchema } from "./filters";
import { getThreadDetail, listActiveThreads } from "./queries";
import { getMergedHandoff, getPacket } from "./packet-reads";

freshDatabaseForThisFile();

const http: IngestSource = { kind: "http", actor: "token:test" };
const HOUR = 3_600_000;
const T0 = Date.parse("2026-11-29T06:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();

const packet = routinePacket;

const list = async (query: Record<string, unknown>) =>
  listActiveThreads(threadListQuerySchema.parse({ limit: 100, ...query }));
const keys = async (query: Record<string, unknown>) => (await list(query)).threads.map((card) => card.key).sort();

describe("listActiveThreads filters", () => {
  beforeAll(async () => {
    const at = (hours: number) => new Date(T0 + hours * HOUR);
    await ingestPacket(
      packet({ project: "filt/pay", branch: "main", agent: "pay-bot", summary: "refund webhooks done" }),
      http,
      at(1),
    );
    await ingestPacket(
      packet({
        project: "filt/pay",
        branch: "feat/dlq",
        agent: "pay-bot",
        open_risks: [{ severity: "critical", detail: "prod plan deletes resources" }],
        next_action: "start the queue emulator",
      }),
      http,
      at(2),
    );
    await ingestPacket(
      packet({
        project: "filt/web",
        branch: "main",
        agent: "web-bot",
        topic: "checkout",
        open_risks: [{ severity: "high", detail: "retries may run twice" }],
        questions_for_human: ["Which reviewer?"],
      }),
      http,
      at(3),
    );
    await ingestPacket(
      packet({
        project: "filt/web",
        branch: "feat/form",
        agent: "web-bot",
        open_risks: ["bare string risk"],
        clean_state: ["scratch/ left behind"],
        next_action: "no next_action recorded; needs human",
      }),
      http,
      at(4),
    );
    // Archived threads never show, whatever the filter.
    await ingestPacket(
      packet({ project: "filt/pay", branch: "old", agent: "pay-bot", status: "archived", summary: "refund archive" }),
      http,
      at(5),
    );
  });

  it("lists every non-archived thread without filters", async () => {
    expect(await keys({ q: "filt/" })).toEqual(["filt/pay@feat/dlq", "filt/pay@main", "filt/web@feat/form", "filt/web@main#checkout"]);
  });

  it("filters by free text over key, agent, topic, next action and summary", async () => {
    expect(await keys({ q: "refund" })).toEqual(["filt/pay@main"]);
    expect(await keys({ q: "queue emulator" })).toEqual(["filt/pay@feat/dlq"]);
    expect(await keys({ q: "checkout" })).toEqual(["filt/web@main#checkout"]);
    expect(await keys({ q: "web-bot" })).toEqual(["filt/web@feat/form", "filt/web@main#checkout"]);
    expect(await keys({ q: "nothing matches this" })).toEqual([]);
  });

  it("filters by agent, project and branch exactly", async () => {
    expect(await keys({ agent: "pay-bot" })).toEqual(["filt/pay@feat/dlq", "filt/pay@main"]);
    expect(await keys({ project: "filt/web" })).toEqual(["filt/web@feat/form", "filt/web@main#checkout"]);
    expect(await keys({ project: "filt/web", branch: "main" })).toEqual(["filt/web@main#checkout"]);
    expect(await keys({ project: "filt" })).toEqual([]);
  });

  it("filters by a list of highest severities", async () => {
    expect(await keys({ q: "filt/", severity: "critical" })).toEqual(["filt/pay@feat/dlq"]);
    expect(await keys({ q: "filt/", severity: "critical,high" })).toEqual(["filt/pay@feat/dlq", "filt/web@main#checkout"]);
    expect(await keys({ q: "filt/", severity: "medium" })).toEqual(["filt/web@feat/form"]);
    expect(await keys({ q: "filt/", severity: "info" })).toEqual([]);
  });

  it("filters by flags, every listed flag required", async () => {
    expect(await keys({ q: "filt/", flag: "open_questions" })).toEqual(["filt/web@main#checkout"]);
    expect(await keys({ q: "filt/", flag: "dirty_state" })).toEqual(["filt/web@feat/form"]);
    expect(await keys({ q: "filt/", flag: "dirty_state,missing_next_action,unknown_severity" })).toEqual(["filt/web@feat/form"]);
    expect(await keys({ q: "filt/", flag: "dirty_state,open_questions" })).toEqual([]);
  });

  it("combines filters", async () => {
    expect(await keys({ project: "filt/web", severity: "high,medium", flag: "open_questions" })).toEqual(["filt/web@main#checkout"]);
    expect(await keys({ agent: "pay-bot", q: "emulator", severity: "critical" })).toEqual(["filt/pay@feat/dlq"]);
  });

  it("rejects unknown severities and flags in the query", () => {
    expect(threadListQuerySchema.safeParse({ severity: "urgent" }).success).toBe(false);
    expect(threadListQuerySchema.safeParse({ flag: "nope" }).success).toBe(false);
  });

  it("builds the card from the active packet", async () => {
    const [card] = (await list({ project: "filt/web", branch: "main" })).threads;
    expect(card).toMatchObject({
      key: "filt/web@main#checkout",
      agent: "web-bot",
      topic: "checkout",
      archived: false,
      updated_at: iso(T0 + 3 * HOUR),
      active_packet: {
        next_action: "run the suite again",
        highest_severity: "high",
        risk_counts: { critical: 0, high: 1, medium: 0, low: 0, info: 0 },
        question_count: 1,
      },
    });
    expect(card!.active_packet.flags.map((flag) => flag.code)).toEqual(["open_questions"]);
  });
});

describe("listActiveThreads pagination", () => {
  const COUNT = 25;
  beforeAll(async () => {
    // Groups of three share an updated_at, so the cursor's tie-break on id is exercised.
    for (let i = 0; i < COUNT; i++) {
      await ingestPacket(
        packet({ project: "pages", branch: `b-${String(i).padStart(2, "0")}` }),
        http,
        new Date(T0 + 100 * HOUR + Math.floor(i / 3) * 60_000),
      );
    }
  });

  async function allPages(query: Record<string, unknown>) {
    const pages: string[][] = [];
    const updated: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await listActiveThreads(threadListQuerySchema.parse({ ...query, limit: 10, cursor }));
      pages.push(page.threads.map((card) => card.key));
      updated.push(...page.threads.map((card) => card.updated_at));
      cursor = page.next_cursor ?? undefined;
      expect(pages.length).toBeLessThan(20);
    } while (cursor);
    return { pages, keys: pages.flat(), updated };
  }

  async function expectedOrder(project?: string): Promise<string[]> {
    const db = await database();
    const rows = await db.thread.findMany({
      where: { archived: false, ...(project ? { project } : {}) },
      orderBy: [{ updatedAt: "desc" }, { id: "desc" }],
      select: { key: true },
    });
    return rows.map((row) => row.key);
  }

  it("returns every thread exactly once, newest first, 10 at a time", async () => {
    const { pages, keys: seen, updated } = await allPages({ project: "pages" });
    expect(pages.map((page) => page.length)).toEqual([10, 10, 5]);
    expect(seen).toHaveLength(COUNT);
    expect(new Set(seen).size).toBe(COUNT);
    expect(seen).toEqual(await expectedOrder("pages"));
    expect([...updated].sort().reverse()).toEqual(updated);
    // The newest group (threads 24, then 21-23 a minute earlier) comes first.
    expect(seen[0]).toBe("pages@b-24");
    expect(seen.at(-1)?.startsWith("pages@b-0")).toBe(true);
  });

  it("paginates the unfiltered board the same way", async () => {
    const { keys: seen } = await allPages({});
    const expected = await expectedOrder();
    expect(seen).toEqual(expected);
    expect(new Set(seen).size).toBe(expected.length);
    expect(expected.length).toBeGreaterThan(COUNT);
  });

  it("ends with a null cursor when the last page is full", async () => {
    const page = await listActiveThreads(threadListQuerySchema.parse({ project: "pages", limit: 25 }));
    expect(page.threads).toHaveLength(25);
    expect(page.next_cursor).toBeNull();
  });

  it("refuses a cursor it did not issue", async () => {
    const error = await listActiveThreads(threadListQuerySchema.parse({ cursor: "not-a-cursor" })).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BatonError);
    expect((error as BatonError).code).toBe("invalid_request");
  });
});

describe("getThreadDetail", () => {
  it("lists versions newest first by the ordering and marks the active one", async () => {
    const base = { project: "detail", branch: "main" };
    const v2 = await ingestPacket(packet({ ...base, summary: "v2", created_at: iso(T0 + 2 * HOUR) }), http, new Date(T0 + 2 * HOUR));
    const v3 = await ingestPacket(packet({ ...base, summary: "v3", created_at: iso(T0 + 3 * HOUR) }), http, new Date(T0 + 3 * HOUR));
    // v1 arrives last but was made first; it must sort last and stay inactive.
    const v1 = await ingestPacket(
      packet({ ...base, summary: "v1", created_at: iso(T0 + HOUR), next_action: "first step" }),
      http,
      new Date(T0 + 4 * HOUR),
    );

    const detail = await getThreadDetail("detail@main");
    expect(detail.versions.map((version) => [version.id, version.active])).toEqual([
      [v3.packet_id, true],
      [v2.packet_id, false],
      [v1.packet_id, false],
    ]);
    expect(detail.active_packet.id).toBe(v3.packet_id);
    expect(detail.active_packet.summary).toBe("v3");
    expect(detail.versions[2]).toMatchObject({
      source: "http",
      created_at: iso(T0 + HOUR),
      received_at: iso(T0 + 4 * HOUR),
      next_action: "first step",
      highest_severity: "low",
    });
  });

  it("answers not_found for an unknown thread", async () => {
    const error = await getThreadDetail("no-such-thread").catch((caught: unknown) => caught);
    expect((error as BatonError).code).toBe("not_found");
  });
});

describe("getMergedHandoff", () => {
  it("keeps the agent's fields in their order and replaces its human section with Baton's", async () => {
    const received = {
      zeta_extra: { nested: [3, 2, 1], keep: "as is" },
      summary: "merged view",
      project: "merge",
      branch: "main",
      human: { revision: 7, decision: { kind: "approved", by: "someone" }, answers: [], questions: [] },
      next_action: { action: "ship it", command: "npm run release" },
      open_risks: ["a bare risk", { severity: "WARN", detail: "something" }],
      created_at: 1796000000.5,
      alpha_extra: null,
      changed_files: ["b.ts", "a.ts"],
    };
    const result = await ingestPacket(received, http);
    const merged = await getMergedHandoff("merge@main");

    expect(merged.packetId).toBe(result.packet_id);
    const agentKeys = Object.keys(received).filter((key) => key !== "human");
    expect(Object.keys(merged.body)).toEqual([...agentKeys, "human"]);
    for (const key of agentKeys) expect(merged.body[key]).toEqual(received[key as keyof typeof received]);
    expect(merged.body.human).toEqual({ revision: 0, updated_at: null, decision: null, answers: [], questions: [] });
  });

  it("serves the active version's content", async () => {
    await ingestPacket(packet({ project: "merge", branch: "versions", summary: "old", created_at: iso(T0) }), http);
    await ingestPacket(packet({ project: "merge", branch: "versions", summary: "new", created_at: iso(T0 + HOUR) }), http);
    await ingestPacket(packet({ project: "merge", branch: "versions", summary: "late but older", created_at: iso(T0 - HOUR) }), http);
    const merged = await getMergedHandoff("merge@versions");
    expect(merged.body.summary).toBe("new");
  });
});

describe("getPacket", () => {
  it("shows a version with its thread, whether it is active, and the place its file was found after it arrived", async () => {
    const base = { project: "packet", branch: "main" };
    const first = await ingestPacket(packet({ ...base, summary: "first", created_at: iso(T0) }), http, new Date(T0 + HOUR));
    const second = await ingestPacket(packet({ ...base, summary: "second", created_at: iso(T0 + HOUR) }), http, new Date(T0 + 2 * HOUR));
    const old = await getPacket(first.packet_id);
    expect(old).toMatchObject({
      id: first.packet_id,
      thread_key: "packet@main",
      active: false,
      source: "http",
      source_path: null,
      workspace_root: null,
      received_at: iso(T0 + HOUR),
      flags_computed_at: iso(T0 + HOUR),
      created_at: iso(T0),
      canonical: { summary: "first" },
      received: { summary: "first" },
    });
    expect(old.content_hash).toMatch(/^[0-9a-f]{64}$/);

    // Arrived over HTTP, its file found in a watched folder later (docs/decisions/050-one-location-per-packet.md).
    await (await database()).packetLocation.create({
      data: { versionId: second.packet_id, sourcePath: "/srv/ws/handoff.json", workspaceRoot: "/srv/ws", recordedAt: new Date(T0 + 3 * HOUR) },
    });
    expect(await getPacket(second.packet_id)).toMatchObject({ active: true, source: "http", source_path: "/srv/ws/handoff.json", workspace_root: "/srv/ws" });
  });

  it("answers not_found for an unknown id", async () => {
    const error = await getPacket("pv_no_such_packet").catch((caught: unknown) => caught);
    expect((error as BatonError).code).toBe("not_found");
  });
});
