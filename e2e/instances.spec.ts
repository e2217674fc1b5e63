import { mkdirSync, writeFileSync } from "node:fs";
import { get as httpGet, type ClientRequest } from "node:http";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { request as playwrightRequest, type APIRequestContext, type APIResponse, type BrowserContext, type Page } from "@playwright/test";
import { expect, test } from "./support/fixtures";
import { bearer, packetFor, postPacket, threadPath, uniqueId, type IngestResult } from "./support/api";
import { card, waitForLive } from "./support/board";
import { E2E_RESULTS } from "./support/paths";
import { fromPage, signInApi } from "./support/people";
import { migrateDatabase } from "../lib/db/migrate/index";
import { recordFigure } from "../testing/reliability";
import { createPostgresqlDatabase, testsRunOnPostgresql } from "../testing/postgresql";
import { freePort, ownAdmin, ownToken, startOwnServer, stopOwnServer, type OwnServer } from "./support/own-server";
import { startTestReceiver, type TestReceiver } from "../testing/webhook-receiver";

/**
 * Two Baton instances on one PostgreSQL database (docs/decisions/023-postgresql.md): what one
 * instance ingests shows live on the other's board; the same packet, the same
 * human action and the versions of one thread raced through both give the
 * answers and the rows one instance would; scheduled work (stale checks,
 * webhook deliveries) happens once per event; both survive their database
 * connections being cut. The database is checked afterwards.
 *
 * The spec starts its own database and two `next start` servers of the suite's
 * build; it needs BATON_TEST_POSTGRESQL_URL (a role that may create databases).
 */

const STALE_SECONDS = 6;
const CHECK_SECONDS = 1;
// Two servers, each given up to 90 s to answer (e2e/support/own-server.ts).
const SERVER_START_TIMEOUT_MS = 2 * 90_000;
/** A card ingested on A must be on B's board within this (the measured figure is recorded). */
const LIVE_BOUND_MS = 5_000;
const ADMIN = { username: "instances-admin", password: "instances e2e password" };

// Only in the PostgreSQL pass: playwright.config.ts leaves this spec out of the SQLite one.
if (!testsRunOnPostgresql()) throw new Error("instances.spec.ts needs the PostgreSQL pass: npm run test:postgresql with BATON_TEST_POSTGRESQL_URL");
test.describe.configure({ mode: "serial" });

interface Instance extends OwnServer {
  name: string;
  api: APIRequestContext;
}

/** The suite's build (BATON_DIST_DIR, as next.config.ts reads it), served by one more `next start` on the shared database. */
async function startInstance(name: string, databaseUrl: string): Promise<Instance> {
  const server = await startOwnServer({
    databaseUrl,
    port: await freePort(),
    // Idle keep-alive connections outlive the spec's pauses: a server closing one just as the
    // client reuses it would answer a request with a reset (a harness race, not Baton's).
    args: ["--keepAliveTimeout", "120000"],
    env: {
      BATON_STALE_HOURS: (STALE_SECONDS / 3600).toString(),
      BATON_STALE_CHECK_SECONDS: String(CHECK_SECONDS),
      BATON_RATE_LIMIT_PER_MINUTE: "1000000",
      BATON_RATE_LIMIT_BURST: "100000",
      // The webhook receiver listens on 127.0.0.1: allowed only when listed (decision 025).
      BATON_WEBHOOK_ALLOWED_TARGETS: "127.0.0.1",
    },
  });
  return { ...server, name, api: await playwrightRequest.newContext({ baseURL: server.baseURL, storageState: { cookies: [], origins: [] } }) };
}

async function stopInstance(instance: Instance): Promise<void> {
  await instance.api.dispose().catch(() => undefined);
  const started = Date.now();
  await stopOwnServer(instance);
  instance.log.push(`[instances.spec] stopping took ${Date.now() - started} ms\n`);
  // Kept for whoever reads a failure.
  mkdirSync(E2E_RESULTS, { recursive: true });
  writeFileSync(path.join(E2E_RESULTS, `instances-${instance.name}.log`), instance.log.join(""));
}

/** Lines of an instance's output that report a failure (a 500 is logged as "unexpected error"). */
const failuresIn = (instance: Instance) => instance.log.join("").split("\n").filter((line) => /unexpected error|Unhandled|uncaught/i.test(line));

let databaseUrl = "";
let dropDatabase: (() => Promise<void>) | null = null;
let db: pg.Client | null = null;
let a: Instance | undefined;
let b: Instance | undefined;
let token = "";
/** Every packet id an instance acknowledged (201 stored, or 200 duplicate of it). */
const acked = new Set<string>();
/** B's board, open from the first test to the database cut. */
let boardContext: BrowserContext | undefined;
let boardPage: Page | undefined;
const run = uniqueId("inst").toLowerCase();
const staleKey = `${run}/goes-stale`;

async function query<Row extends Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<Row[]> {
  return (await db!.query<Row>(sql, params)).rows;
}

async function ingest(instance: Instance, body: unknown): Promise<APIResponse> {
  const response = await postPacket(instance.api, token, body);
  if (response.status() === 200 || response.status() === 201) acked.add(((await response.json()) as IngestResult).packet_id);
  return response;
}

async function ingestStored(instance: Instance, body: unknown): Promise<IngestResult> {
  const response = await ingest(instance, body);
  expect(response.status(), `${instance.name}: ${await response.text()}`).toBe(201);
  return (await response.json()) as IngestResult;
}

/** An instance's ledger stream (GET /api/v1/stream), read as it arrives: its events, and when each thread's first packet_received came. */
interface StreamedEvent {
  seq: number;
  kind: string;
  thread_key: string | null;
  packet_id: string | null;
}

async function openLedgerStream(instance: Instance): Promise<{ arrivals: Map<string, number>; events: StreamedEvent[]; close: () => void }> {
  const arrivals = new Map<string, number>();
  const events: StreamedEvent[] = [];
  let buffer = "";
  let request: ClientRequest | undefined;
  await new Promise<void>((resolve, reject) => {
    request = httpGet(`${instance.baseURL}/api/v1/stream`, { headers: bearer(token), agent: false }, (response) => {
      if (response.statusCode !== 200) reject(new Error(`GET /api/v1/stream on ${instance.name}: ${response.statusCode}`));
      response.setEncoding("utf8");
      // Destroying the request at the end aborts the response: not a failure.
      response.on("error", () => undefined);
      response.on("data", (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (/^event: ready$/m.test(block)) resolve();
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (!/^event: ledger$/m.test(block) || !data) continue;
          const event = JSON.parse(data) as StreamedEvent;
          events.push(event);
          if (event.kind === "packet_received" && event.thread_key && !arrivals.has(event.thread_key)) arrivals.set(event.thread_key, Date.now());
        }
      });
    });
    request.on("error", reject);
  });
  // Its own connection (agent: false), closed for good: a stream left open would hold up the server's shutdown.
  return { arrivals, events, close: () => request?.destroy() };
}

const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;

test.beforeAll(async ({ browser }) => {
  test.setTimeout(SERVER_START_TIMEOUT_MS + 30_000);
  // One per suite run: two runs side by side have their own BATON_E2E_PORT (e2e/support/paths.ts).
  const created = await createPostgresqlDatabase(`baton_instances_${process.env.BATON_E2E_PORT ?? "3210"}`);
  databaseUrl = created.url;
  dropDatabase = created.drop;
  await migrateDatabase(databaseUrl);
  db = new pg.Client({ connectionString: databaseUrl, application_name: "baton-instances-spec" });
  await db.connect();
  [a, b] = await Promise.all([startInstance("A", databaseUrl), startInstance("B", databaseUrl)]);
  const admin = await ownAdmin(a, ADMIN);
  token = await ownToken(a, admin, "instances-agent", ["packets:write", "packets:read"]);
  await admin.dispose();
  // The watchdog's thread: silent from now on, so it goes stale while both instances check.
  await ingestStored(a, packetFor(staleKey));
  boardContext = await browser.newContext({ baseURL: b.baseURL, storageState: { cookies: [], origins: [] } });
  await signInApi(boardContext.request, b.baseURL, ADMIN);
});

test.afterAll(async () => {
  await boardContext?.close().catch(() => undefined);
  await Promise.all([a, b].filter((instance): instance is Instance => !!instance).map(stopInstance));
  await db?.end().catch(() => undefined);
  await dropDatabase?.();
});

test("a packet ingested through A reaches B's ledger stream at once, and B's open board within seconds", async () => {
  test.setTimeout(90_000);
  // The stream first: B hears A's commit through NOTIFY, not its 5-second safety-net read.
  const stream = await openLedgerStream(b!);
  const streamed: number[] = [];
  try {
    for (let index = 0; index < 8; index++) {
      const key = `${run}/stream-${index}`;
      await ingestStored(a!, packetFor(key));
      // From A's answer (the commit, and so the NOTIFY, came before it) to the event on B's stream.
      const answered = Date.now();
      await expect.poll(() => stream.arrivals.has(key), { timeout: 10_000, intervals: [5] }).toBe(true);
      streamed.push(Math.max(0, stream.arrivals.get(key)! - answered));
    }
  } finally {
    stream.close();
  }
  recordFigure("instances", "ledger stream across instances: median ms from the 201 of A to the event on B's stream", median(streamed), `8 packets: ${streamed.join(", ")} ms`);
  // Through the safety net alone, half of them would take more than 2.5 s.
  expect(median(streamed), `${streamed.join(", ")} ms`).toBeLessThan(1_000);

  boardPage = await boardContext!.newPage();
  await boardPage.goto(`/?q=${run}/live`);
  await waitForLive(boardPage);
  /** Milliseconds from the POST to the card on B's board, for packets sent through `instance`. */
  const measure = async (instance: Instance, label: string) => {
    const latencies: number[] = [];
    for (let index = 0; index < 5; index++) {
      const key = `${run}/live-${label}-${index}`;
      const started = Date.now();
      await ingestStored(instance, packetFor(key, { summary: `live ${label} ${index}` }));
      await card(boardPage!, key).waitFor({ state: "visible", timeout: LIVE_BOUND_MS + 5_000 });
      latencies.push(Date.now() - started);
    }
    return latencies;
  };
  // Through B itself first, for comparison: the board's own refresh and rendering.
  const local = await measure(b!, "local");
  const across = await measure(a!, "across");
  recordFigure("instances", "live board, packet through the same instance: median ms from POST to card", median(local), `5 packets: ${local.join(", ")} ms`);
  recordFigure("instances", "live board across instances: median ms from POST on A to the card on B", median(across), `5 packets: ${across.join(", ")} ms`);
  recordFigure("instances", "live board across instances: slowest ms", Math.max(...across), `bound ${LIVE_BOUND_MS} ms`);
  expect(Math.max(...across), `latencies ${across.join(", ")} ms`).toBeLessThan(LIVE_BOUND_MS);
});

test("the same packet sent through A and B at once is stored once: one 201, one 200 duplicate", async () => {
  const packets = Array.from({ length: 20 }, (_, index) => packetFor(`${run}/same-${index}`, { summary: `raced packet ${index}` }));
  const pairs = await Promise.all(packets.map((packet) => Promise.all([ingest(a!, packet), ingest(b!, packet)])));
  for (const [index, pair] of pairs.entries()) {
    const statuses = pair.map((response) => response.status());
    expect(statuses.slice().sort(), `packet ${index}: ${await pair[0].text()} / ${await pair[1].text()}`).toEqual([200, 201]);
    const [first, second] = (await Promise.all(pair.map((response) => response.json()))) as IngestResult[];
    expect(first!.packet_id).toBe(second!.packet_id);
    expect([first!.duplicate, second!.duplicate].sort()).toEqual([false, true]);
  }
  const versions = await query<{ key: string; versions: number; received: number }>(
    `SELECT t."key", COUNT(DISTINCT v."id")::int AS "versions",
        (SELECT COUNT(*)::int FROM "LedgerEvent" e WHERE e."threadKey" = t."key" AND e."kind" = 'packet_received') AS "received"
      FROM "Thread" t JOIN "PacketVersion" v ON v."threadId" = t."id" WHERE t."key" LIKE $1 GROUP BY t."key"`,
    [`${run}/same-%`],
  );
  expect(versions).toHaveLength(20);
  for (const row of versions) expect(row, row.key).toMatchObject({ versions: 1, received: 1 });
});

/** The ledger of one thread, replayed in seq order, against its stored versions; returns the active version it ends with. */
async function replayThreadLedger(key: string): Promise<{ active: string | null; received: string[] }> {
  const versions = await query<{ id: string; sortAt: number }>(
    `SELECT v."id", (EXTRACT(EPOCH FROM v."sortAt") * 1000)::float8 AS "sortAt" FROM "PacketVersion" v JOIN "Thread" t ON t."id" = v."threadId" WHERE t."key" = $1`,
    [key],
  );
  const sortAt = new Map(versions.map((version) => [version.id, version.sortAt]));
  const events = await query<{ seq: number; kind: string; versionId: string; data: string }>(
    `SELECT "seq", "kind", "versionId", "data" FROM "LedgerEvent" WHERE "threadKey" = $1 AND "kind" IN ('packet_received', 'packet_superseded') ORDER BY "seq"`,
    [key],
  );
  // Every version received once; each supersede names the version active at that moment;
  // a version became active only if newer than the active one, was stored superseded only if older.
  let active: string | null = null;
  let expectedSupersede: { from: string; by: string } | null = null;
  const received: string[] = [];
  for (const event of events) {
    const data = JSON.parse(event.data) as { superseded_on_arrival?: boolean; superseded_by?: string };
    const where = `${key}, seq ${event.seq}`;
    if (event.kind === "packet_received") {
      expect(expectedSupersede, `${where}: a supersede event was missing`).toBeNull();
      received.push(event.versionId);
      if (data.superseded_on_arrival) {
        expect(sortAt.get(event.versionId)!, `${where}: stored superseded but newer than the active version`).toBeLessThan(sortAt.get(active!)!);
      } else {
        if (active !== null) {
          expect(sortAt.get(event.versionId)!, `${where}: became active but older than the active version`).toBeGreaterThan(sortAt.get(active)!);
          expectedSupersede = { from: active, by: event.versionId };
        }
        active = event.versionId;
      }
    } else {
      expect({ from: event.versionId, by: data.superseded_by }, where).toEqual(expectedSupersede);
      expectedSupersede = null;
    }
  }
  expect(expectedSupersede, key).toBeNull();
  expect(received.slice().sort(), `${key}: versions stored and received`).toEqual(versions.map((version) => version.id).sort());
  return { active, received };
}

test("versions of existing threads arriving at A and B at once: the newest created_at is active, each version stored and streamed once", async () => {
  const threads = Array.from({ length: 4 }, (_, index) => `${run}/ordering-${index}`);
  const rounds = 12;
  const base = Date.now() - 3_600_000;
  // Risks and failed attempts: more rows per version, so that transactions last long enough to overlap.
  const packetOf = (key: string, index: number) =>
    packetFor(key, {
      summary: `version ${index}`,
      created_at: new Date(base + index * 1000).toISOString(),
      open_risks: Array.from({ length: 20 }, (_, risk) => ({ severity: "low", detail: `risk ${risk} of version ${index} of ${key}` })),
      failed_attempts: Array.from({ length: 10 }, (_, attempt) => ({ attempt: `attempt ${attempt} of version ${index}`, reason: "it did not work" })),
    });
  // Each thread exists first (its oldest version), so the versions below race over one thread row.
  for (const key of threads) await ingestStored(a!, packetOf(key, 0));
  const streams = await Promise.all([openLedgerStream(a!), openLedgerStream(b!)]);
  const sent: { key: string; index: number; id: string }[] = [];
  try {
    // Round after round, two new versions of every thread at once, one through A and one through B;
    // which instance gets the newer one is random. (Two transactions that decide on one thread at
    // the same time, each unaware of the other, would leave the wrong one active and say so in the ledger.)
    for (let round = 1; round <= rounds; round++) {
      const sends = threads.flatMap((key) => {
        const [first, second] = Math.random() < 0.5 ? [2 * round - 1, 2 * round] : [2 * round, 2 * round - 1];
        return [
          { key, index: first, instance: a! },
          { key, index: second, instance: b! },
        ];
      });
      const results = await Promise.all(sends.map((send) => ingestStored(send.instance, packetOf(send.key, send.index))));
      sent.push(...sends.map((send, position) => ({ key: send.key, index: send.index, id: results[position]!.packet_id })));
    }

    for (const key of threads) {
      const newest = sent.find((send) => send.key === key && send.index === 2 * rounds)!.id;
      const [thread] = await query<{ activeVersionId: string }>(`SELECT "activeVersionId" FROM "Thread" WHERE "key" = $1`, [key]);
      expect(thread!.activeVersionId, key).toBe(newest);
      const { active, received } = await replayThreadLedger(key);
      expect(active, key).toBe(newest);
      expect(received).toHaveLength(2 * rounds + 1);
      // Both instances serve the same active packet.
      for (const instance of [a!, b!]) {
        const detail = await instance.api.get(threadPath(key), { headers: bearer(token) });
        expect(detail.status()).toBe(200);
        expect(((await detail.json()) as { active_packet: { id: string } }).active_packet.id, `${key} on ${instance.name}`).toBe(newest);
      }
    }

    // Each instance's live stream carried every one of those packet_received events, once, in seq order:
    // none was skipped because a later seq became visible first.
    const ids = sent.map((send) => send.id).sort();
    for (const [index, stream] of streams.entries()) {
      const name = index ? "B" : "A";
      const ours = () => stream.events.filter((event) => event.kind === "packet_received" && ids.includes(event.packet_id!));
      await expect.poll(() => ours().length, { message: `packet_received events on ${name}'s stream`, timeout: 10_000 }).toBeGreaterThanOrEqual(ids.length);
      expect(ours().map((event) => event.packet_id).sort(), `${name}'s stream`).toEqual(ids);
      const seqs = stream.events.map((event) => event.seq);
      expect(seqs, `${name}'s stream in seq order`).toEqual([...new Set(seqs)].sort((x, y) => x - y));
    }
  } finally {
    for (const stream of streams) stream.close();
  }
});

test("two people approving one packet through A and B at once: one success, one 409, one revision", async () => {
  // The second person, created by the admin through A.
  const adminApi = await playwrightRequest.newContext({ baseURL: a!.baseURL, storageState: { cookies: [], origins: [] } });
  await signInApi(adminApi, a!.baseURL, ADMIN);
  const operator = { username: `${run}-op`.slice(0, 40), password: "operator password for e2e", role: "operator" };
  const createdUser = await adminApi.post("/api/v1/users", { headers: fromPage(a!.baseURL), data: operator });
  expect(createdUser.status(), await createdUser.text()).toBe(201);
  const onB = await playwrightRequest.newContext({ baseURL: b!.baseURL, storageState: { cookies: [], origins: [] } });
  await signInApi(onB, b!.baseURL, operator);
  try {
    for (let round = 0; round < 5; round++) {
      const key = `${run}/decide-${round}`;
      const stored = await ingestStored(round % 2 ? a! : b!, packetFor(key));
      const decision = { kind: "approved", packet_id: stored.packet_id, base_revision: 0 };
      const answers = await Promise.all([
        adminApi.post(threadPath(key, "/decision"), { headers: fromPage(a!.baseURL), data: decision }),
        onB.post(threadPath(key, "/decision"), { headers: fromPage(b!.baseURL), data: decision }),
      ]);
      const statuses = answers.map((answer) => answer.status());
      expect(statuses.slice().sort(), `round ${round}: ${await answers[0].text()} / ${await answers[1].text()}`).toEqual([200, 409]);
      const refused = answers.find((answer) => answer.status() === 409)!;
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("conflict");
      const revisions = await query<{ revision: number; userId: string }>(`SELECT "revision", "userId" FROM "HumanRevision" WHERE "versionId" = $1`, [stored.packet_id]);
      expect(revisions).toHaveLength(1);
      expect(revisions[0]!.revision).toBe(1);
      const approvals = await query<{ count: number }>(`SELECT COUNT(*)::int AS "count" FROM "LedgerEvent" WHERE "threadKey" = $1 AND "kind" = 'human_approved'`, [key]);
      expect(approvals[0]!.count).toBe(1);
    }
  } finally {
    await adminApi.dispose();
    await onB.dispose();
  }
});

test("scheduled work runs once per event with both instances up: one thread_stale per spell, one webhook delivery per event", async () => {
  test.setTimeout(60_000);
  const receiver: TestReceiver = await startTestReceiver();
  const adminApi = await playwrightRequest.newContext({ baseURL: b!.baseURL, storageState: { cookies: [], origins: [] } });
  try {
    await signInApi(adminApi, b!.baseURL, ADMIN);
    const webhook = await adminApi.post("/api/v1/webhooks", {
      headers: fromPage(b!.baseURL),
      data: { name: "instances receiver", url: receiver.url, events: ["question.asked"] },
    });
    expect(webhook.status(), await webhook.text()).toBe(201);
    const webhookId = ((await webhook.json()) as { webhook: { id: string } }).webhook.id;

    // Questions asked on five threads, through both instances at once: five events.
    const keys = Array.from({ length: 5 }, (_, index) => `${run}/asks-${index}`);
    await Promise.all(
      keys.map((key, index) => ingestStored(index % 2 ? a! : b!, packetFor(key, { questions_for_human: [{ id: "q1", question: `Which region for ${index}?` }] }))),
    );
    await receiver.waitFor(keys.length, 20_000);

    // The watchdog's thread went silent before the first test: both instances have checked it every second since.
    await expect
      .poll(async () => (await query<{ count: number }>(`SELECT COUNT(*)::int AS "count" FROM "LedgerEvent" WHERE "threadKey" = $1 AND "kind" = 'thread_stale'`, [staleKey]))[0]!.count, {
        timeout: (STALE_SECONDS + 10) * 1000,
      })
      .toBeGreaterThan(0);

    // Long enough for a second delivery, a retry or a second stale record to show.
    await sleep(4 * CHECK_SECONDS * 1000);
    const received = receiver.requests.map((request) => JSON.parse(request.body.toString("utf8")) as { id: string; event: string; thread: { key: string } });
    expect(received.map((body) => `${body.event} ${body.thread.key}`).sort()).toEqual(keys.map((key) => `question.asked ${key}`).sort());
    expect(new Set(received.map((body) => body.id)).size).toBe(keys.length);
    const deliveries = await query<{ status: string; attempts: number }>(`SELECT "status", "attempts" FROM "WebhookDelivery" WHERE "webhookId" = $1`, [webhookId]);
    expect(deliveries).toHaveLength(keys.length);
    for (const delivery of deliveries) expect(delivery).toEqual({ status: "delivered", attempts: 1 });

    const stale = await query<{ count: number }>(`SELECT COUNT(*)::int AS "count" FROM "LedgerEvent" WHERE "threadKey" = $1 AND "kind" = 'thread_stale'`, [staleKey]);
    expect(stale[0]!.count).toBe(1);
    // Every thread of this run has gone stale by now, some several times (a decision starts a
    // new spell): no spell is ever recorded twice.
    const twice = await query<{ threadKey: string; spell: string; count: number }>(
      `SELECT "threadKey", "data"::json->>'last_activity' AS "spell", COUNT(*)::int AS "count" FROM "LedgerEvent"
        WHERE "kind" = 'thread_stale' GROUP BY 1, 2 HAVING COUNT(*) > 1`,
    );
    expect(twice).toEqual([]);
  } finally {
    await adminApi.dispose();
    await receiver.close();
  }
});

test("both instances come back after their database connections are cut; their feeds catch up from the ledger, B's board live", async () => {
  test.setTimeout(60_000);
  const page = boardPage!;
  await page.goto(`/?q=${run}/after-cut`);
  await waitForLive(page);
  // A ledger stream on each instance, open across the cuts: each instance's feed must reconnect and catch up.
  const streams = await Promise.all([openLedgerStream(a!), openLedgerStream(b!)]);
  const feeds = async () =>
    (await query<{ count: number }>(`SELECT COUNT(*)::int AS "count" FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'baton-live-feed'`))[0]!.count;
  expect(await feeds(), "one live feed connection per instance").toBe(2);

  // Traffic through both instances while every connection to the database is terminated.
  const statuses: { instance: string; status: number; retryAfter?: string }[] = [];
  const packets: Record<string, unknown>[] = [];
  let cut = false;
  const traffic = async (instance: Instance, lane: number) => {
    // Until the last cut, then a few more rounds.
    for (let index = 0, after = 0; after < 3; index++) {
      if (cut) after++;
      const packet = packetFor(`${run}/during-cut-${instance.name}-${lane}-${index}`);
      packets.push(packet);
      const response = await ingest(instance, packet);
      statuses.push({ instance: instance.name, status: response.status(), retryAfter: response.headers()["retry-after"] });
      const board = await instance.api.get("/api/v1/board", { headers: bearer(token) });
      statuses.push({ instance: instance.name, status: board.status(), retryAfter: board.headers()["retry-after"] });
    }
  };
  const lanes = [0, 1, 2];
  const load = Promise.all(lanes.flatMap((lane) => [traffic(a!, lane), traffic(b!, lane)]));
  // Three cuts, 400 ms apart, each with requests in flight on both instances.
  let terminated = 0;
  for (let round = 0; round < 3; round++) {
    await sleep(400);
    // (pg_terminate_backend in the SELECT list: in a WHERE clause it could run before the pid <> test.)
    const killed = await query<{ terminated: boolean }>(
      `SELECT pg_terminate_backend(pid) AS "terminated" FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
    );
    terminated += killed.length;
  }
  cut = true;
  await load;
  expect(terminated).toBeGreaterThan(0);
  const unexpected = statuses.filter((entry) => ![200, 201, 503].includes(entry.status));
  expect(unexpected, `statuses around the cut; A: ${failuresIn(a!).join("\n")} B: ${failuresIn(b!).join("\n")}`).toEqual([]);
  for (const entry of statuses.filter((entry) => entry.status === 503)) expect(entry.retryAfter).toBeDefined();
  // A client retries what was answered 503: every packet sent is then acknowledged once.
  await Promise.all(packets.map((packet) => expect(async () => expect([200, 201]).toContain((await ingest(a!, packet)).status())).toPass({ timeout: 15_000 })));

  // After the cut, a packet ingested through A reaches B's open board: B's feed reconnected.
  const key = `${run}/after-cut`;
  const started = Date.now();
  await ingestStored(a!, packetFor(key));
  await card(page, key).waitFor({ state: "visible", timeout: 15_000 });
  const latency = Date.now() - started;
  recordFigure("instances", "live board after the database connections were cut: ms from POST on A to the card on B", latency);
  recordFigure(
    "instances",
    "requests around the database cut",
    statuses.length,
    `${statuses.filter((entry) => entry.status === 503).length} answered 503 (Retry-After), none 500; ${terminated} connections terminated in 3 cuts`,
  );
  // Both feeds reconnected, and each stream carried every version stored during and after the cuts
  // (what was committed while a feed was down came from the ledger), once each, in seq order.
  await expect.poll(feeds, { message: "live feed connections after the cuts" }).toBe(2);
  const stored = (
    await query<{ id: string }>(`SELECT v."id" FROM "PacketVersion" v JOIN "Thread" t ON t."id" = v."threadId" WHERE t."key" LIKE $1 OR t."key" = $2`, [
      `${run}/during-cut-%`,
      key,
    ])
  ).map((row) => row.id);
  try {
    for (const [index, stream] of streams.entries()) {
      const name = index ? "B" : "A";
      const ours = () => stream.events.filter((event) => event.kind === "packet_received" && stored.includes(event.packet_id!)).map((event) => event.packet_id);
      await expect.poll(() => ours().length, { message: `versions on ${name}'s stream`, timeout: 15_000 }).toBeGreaterThanOrEqual(stored.length);
      expect(ours().sort(), `${name}'s stream`).toEqual(stored.slice().sort());
      const seqs = stream.events.map((event) => event.seq);
      expect(seqs, `${name}'s stream in seq order, no repeats`).toEqual([...new Set(seqs)].sort((x, y) => x - y));
    }
  } finally {
    for (const stream of streams) stream.close();
  }
  // Both answer again, many requests at once: more than an instance's pool of 10 connections,
  // none of which a cut transaction may have kept.
  for (const instance of [a!, b!]) {
    const boards = await Promise.all(Array.from({ length: 25 }, () => instance.api.get("/api/v1/board", { headers: bearer(token), timeout: 15_000 })));
    expect(boards.map((board) => board.status()), instance.name).toEqual(boards.map(() => 200));
  }
  await boardContext!.close();
  boardContext = undefined;
});

test("afterwards, with both instances stopped, the database holds every acknowledged version once and a consistent ledger", async () => {
  await Promise.all([stopInstance(a!), stopInstance(b!)]);
  const versions = await query<{ id: string }>(`SELECT "id" FROM "PacketVersion"`);
  expect(versions.map((version) => version.id).sort()).toEqual([...acked].sort());
  const received = await query<{ versionId: string; count: number }>(
    `SELECT "versionId", COUNT(*)::int AS "count" FROM "LedgerEvent" WHERE "kind" = 'packet_received' GROUP BY 1`,
  );
  expect(received.length).toBe(versions.length);
  expect(received.filter((row) => row.count !== 1)).toEqual([]);
  const wrongActive = await query<{ key: string }>(
    `SELECT t."key" FROM "Thread" t
      WHERE t."activeVersionId" IS DISTINCT FROM (SELECT v."id" FROM "PacketVersion" v WHERE v."threadId" = t."id"
        ORDER BY v."sortAt" DESC, v."receivedAt" DESC, v."id" COLLATE "C" DESC LIMIT 1)`,
  );
  expect(wrongActive).toEqual([]);
  for (const instance of [a!, b!]) expect(failuresIn(instance), `instance ${instance.name}'s log`).toEqual([]);
});
