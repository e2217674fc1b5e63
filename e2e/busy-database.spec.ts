import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import Database from "better-sqlite3";
import { request as playwrightRequest, type APIResponse } from "@playwright/test";
import { expect, test } from "./support/fixtures";
import { bearer, packetFor, threadPath, uniqueId } from "./support/api";
import { fromPage } from "./support/people";
import { sampleResponsiveness, percentile } from "./support/ingest-load";
import { freePort, logTail, migrateOwnDatabase, ownAdmin, ownPerson, ownToken, startOwnServer, stopOwnServer, type OwnServer } from "./support/own-server";
import { checkDatabaseFile } from "../lib/events/consistency";
import { preparePacket } from "../lib/contract/prepare";
import { recordFigure } from "../testing/reliability";

/**
 * Issue 8, item 3: a busy database answers 503 with Retry-After, never a 500. Another
 * connection (a CLI command, a second instance) holds SQLite's write lock for longer
 * than the server's busy timeout while agents, people and the watched folder write and
 * read over real HTTP. Every write answers 503 with Retry-After (nothing stored), every
 * read answers 200, the server keeps answering meanwhile, and once the lock is gone
 * the same writes succeed, the watched file is picked up and the ledger holds together.
 */

const BUSY_TIMEOUT_MS = 2_000;
// At least this long, and until every request sent meanwhile is answered.
const HOLD_MS = 7_000;
// The wait for the lock used to block the event loop (5 s a write, several writes in a row);
// now it runs on timers. Generous for a shared machine.
const MAX_HEALTH_MS = 5_000;
const SECTION = "busy-database";

interface Answer {
  what: string;
  kind: "write" | "read";
  status: number;
  retryAfter: string | null;
  ms: number;
  body: string;
}

async function timed(what: string, kind: Answer["kind"], send: () => Promise<APIResponse>): Promise<Answer> {
  const started = performance.now();
  const response = await send();
  return { what, kind, status: response.status(), retryAfter: response.headers()["retry-after"] ?? null, ms: performance.now() - started, body: (await response.text()).slice(0, 300) };
}

let server: OwnServer | undefined;
let folder = "";

test.afterAll(async () => {
  await stopOwnServer(server);
  if (folder) rmSync(folder, { recursive: true, force: true });
});

test("a database locked by another process answers 503 with Retry-After (never 500), reads go on, and the writes succeed once it is free", async () => {
  test.setTimeout(180_000);
  folder = mkdtempSync(path.join(tmpdir(), "baton-e2e-busy-"));
  const file = path.join(folder, "baton.db");
  const databaseUrl = `file:${file}`;
  const watchDir = path.join(folder, "watched");
  mkdirSync(watchDir, { recursive: true });
  const operator = { username: "busy-operator", password: "busy e2e password 1" };
  await migrateOwnDatabase(databaseUrl);
  server = await startOwnServer({
    databaseUrl,
    port: await freePort(),
    env: {
      BATON_SQLITE_BUSY_TIMEOUT_MS: String(BUSY_TIMEOUT_MS),
      BATON_WATCH_DIRS: watchDir,
      BATON_WATCH_RESCAN_SECONDS: "1",
      BATON_RATE_LIMIT_PER_MINUTE: "0",
    },
  });
  const admin = await ownAdmin(server, { username: "busy-admin", password: "busy e2e admin password" });
  await ownPerson(server, admin, { ...operator, role: "operator" });
  const token = await ownToken(server, admin, "busy-agent", ["packets:write", "packets:read", "events:write"]);
  await admin.dispose();
  const { baseURL } = server;
  const agent = await playwrightRequest.newContext({ baseURL, timeout: 60_000 });
  const person = await playwrightRequest.newContext({ baseURL, timeout: 60_000 });
  const stranger = await playwrightRequest.newContext({ baseURL, timeout: 60_000 });
  try {
    const signedIn = await person.post("/api/v1/session", { headers: fromPage(baseURL), data: operator });
    expect(signedIn.status(), await signedIn.text()).toBe(200);
    const post = (body: unknown) =>
      agent.post("/api/v1/packets", { headers: { ...bearer(token), "content-type": "application/json" }, data: Buffer.from(JSON.stringify(body)) });

    // A thread to act on while the lock is held.
    const key = uniqueId("busy");
    const seeded = await post(packetFor(key));
    expect(seeded.status(), await seeded.text()).toBe(201);
    const seed = (await seeded.json()) as { packet_id: string };
    const { fingerprint } = (() => {
      const db = new Database(file, { readonly: true });
      try {
        return db.prepare(`SELECT "fingerprint" FROM "Risk" WHERE "versionId" = ?`).get(seed.packet_id) as { fingerprint: string };
      } finally {
        db.close();
      }
    })();
    const packets = Array.from({ length: 12 }, (_, n) => packetFor(`${key}-${n}`));
    const batch = { packets: Array.from({ length: 3 }, (_, n) => packetFor(`${key}-batch-${n}`)) };
    const watched = packetFor(`${key}-watched`, { summary: "written while the database was locked" });
    const watchedFile = path.join(watchDir, "ws", "outputs", "handoff", "s1", "handoff.json");
    const decision = { kind: "approved", packet_id: seed.packet_id, base_revision: 0 };
    const triage = { action: "acknowledged", targets: [{ thread_key: key, fingerprint }] };

    const holder = new Database(file);
    holder.exec("BEGIN IMMEDIATE");
    const lockedAt = performance.now();
    const stopSampling = new AbortController();
    const health = sampleResponsiveness(server.port, "/api/v1/health", 250, stopSampling.signal);
    let answers: Answer[];
    let heldMs = 0;
    try {
      const wave = async (startMs: number, sends: (() => Promise<Answer>)[]) => {
        await sleep(startMs);
        return Promise.all(sends.map((send) => send()));
      };
      mkdirSync(path.dirname(watchedFile), { recursive: true });
      writeFileSync(watchedFile, JSON.stringify(watched));
      const waves = await Promise.all([
        wave(0, [
          ...packets.slice(0, 4).map((body, n) => () => timed(`packet ${n}`, "write", () => post(body))),
          () => timed("batch of 3", "write", () => post(batch)),
          () => timed("heartbeat", "write", () => agent.post(threadPath(key, "/events"), { headers: bearer(token), data: { kind: "heartbeat" } })),
          () => timed("board (token)", "read", () => agent.get("/api/v1/board", { headers: bearer(token) })),
        ]),
        wave(1_500, [
          ...packets.slice(4, 8).map((body, n) => () => timed(`packet ${n + 4}`, "write", () => post(body))),
          () => timed("approve (person)", "write", () => person.post(threadPath(key, "/decision"), { headers: fromPage(baseURL), data: decision })),
          () => timed("risk triage (person)", "write", () => person.post("/api/v1/risks/triage", { headers: fromPage(baseURL), data: triage })),
          () => timed("sign-in", "write", () => stranger.post("/api/v1/session", { headers: fromPage(baseURL), data: operator })),
          () => timed("threads (token)", "read", () => agent.get("/api/v1/threads", { headers: bearer(token) })),
          () => timed("thread (token)", "read", () => agent.get(threadPath(key), { headers: bearer(token) })),
        ]),
        wave(3_000, [
          ...packets.slice(8).map((body, n) => () => timed(`packet ${n + 8}`, "write", () => post(body))),
          () => timed("board (person)", "read", () => person.get("/api/v1/board")),
          () => timed("board page (person)", "read", () => person.get("/")),
          () => timed("risks (person)", "read", () => person.get("/api/v1/risks")),
        ]),
      ]);
      // Held until every answer is in (and for HOLD_MS at least): each write met the lock throughout.
      answers = waves.flat();
      await sleep(Math.max(0, HOLD_MS - (performance.now() - lockedAt)));
      heldMs = performance.now() - lockedAt;
    } finally {
      holder.exec("ROLLBACK");
      holder.close();
      stopSampling.abort();
    }
    const healthSamples = await health;

    const failures = answers.filter((answer) =>
      answer.kind === "read" ? answer.status !== 200 : !(answer.status === 503 && answer.retryAfter === "1"),
    );
    expect(failures, `every write answers 503 with Retry-After: 1 and every read 200 while locked:\n${JSON.stringify(failures, null, 1)}\n${logTail(server)}`).toEqual([]);
    for (const answer of answers.filter((answer) => answer.kind === "write")) {
      expect(JSON.parse(answer.body), answer.what).toMatchObject({ error: { code: "unavailable" } });
    }
    expect(healthSamples.every((sample) => sample.status === 200), JSON.stringify(healthSamples)).toBe(true);
    const healthMs = healthSamples.map((sample) => sample.ms);
    expect(Math.max(...healthMs), "the server kept answering while it waited for the lock").toBeLessThan(MAX_HEALTH_MS);

    // Nothing half-stored: the 503s stored nothing, and sent again they are new.
    for (const body of packets) {
      const again = await post(body);
      expect(again.status(), await again.text()).toBe(201);
    }
    const batchAgain = await post(batch);
    expect(batchAgain.status()).toBe(207);
    expect(((await batchAgain.json()) as { results: { status: number }[] }).results.map((item) => item.status)).toEqual([201, 201, 201]);
    const approved = await person.post(threadPath(key, "/decision"), { headers: fromPage(baseURL), data: decision });
    expect(approved.status(), await approved.text()).toBe(200);
    const acknowledged = await person.post("/api/v1/risks/triage", { headers: fromPage(baseURL), data: triage });
    expect(acknowledged.status(), await acknowledged.text()).toBe(200);

    // The watched file met the lock too; the next rescan takes it again.
    const watchedHash = preparePacket(watched, Date.now()).contentHash;
    const storedHashes = () => {
      const db = new Database(file, { readonly: true });
      try {
        return (db.prepare(`SELECT count(*) AS n FROM "PacketVersion" WHERE "contentHash" = ?`).get(watchedHash) as { n: number }).n;
      } finally {
        db.close();
      }
    };
    await expect.poll(storedHashes, { timeout: 20_000, message: `the watched file is ingested after the lock is released:\n${logTail(server)}` }).toBe(1);

    const report = checkDatabaseFile(file);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);

    const writes = answers.filter((answer) => answer.kind === "write");
    recordFigure(SECTION, "lock held by another connection", `${Math.round(heldMs)} ms`, `server busy timeout (BATON_SQLITE_BUSY_TIMEOUT_MS) ${BUSY_TIMEOUT_MS} ms; held until every request sent meanwhile was answered`);
    recordFigure(SECTION, "writes during the lock", writes.length, "packets, a batch, a heartbeat, approve, triage, sign-in");
    recordFigure(SECTION, "writes answered 503 with Retry-After", writes.filter((answer) => answer.status === 503 && answer.retryAfter).length);
    recordFigure(SECTION, "reads during the lock answered 200", `${answers.filter((answer) => answer.kind === "read" && answer.status === 200).length} of ${answers.filter((answer) => answer.kind === "read").length}`);
    recordFigure(SECTION, "answers 500", answers.filter((answer) => answer.status === 500).length);
    recordFigure(SECTION, "slowest write answer", `${Math.round(Math.max(...writes.map((answer) => answer.ms)))} ms`, "about the busy timeout: the wait runs on timers");
    recordFigure(SECTION, "health during the lock", `p50 ${Math.round(percentile(healthMs, 50))} ms, max ${Math.round(Math.max(...healthMs))} ms`, `${healthSamples.length} samples, every 250 ms`);
    recordFigure(SECTION, "sent again after the lock", "all stored", "12 packets 201, the batch 207 (3 x 201), approve and triage 200, the watched file ingested; ledger consistent");
  } finally {
    await agent.dispose();
    await person.dispose();
    await stranger.dispose();
  }
});
