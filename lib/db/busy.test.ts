// vitest: isolated (it holds SQLite's write lock and changes the busy timeout: a fresh module graph,
// so nothing a file before it left in the shared one (a queued write, a cached config) changes it)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { personOfSession, startSession } from "../auth/sessions";
import { authenticateBearer, createApiToken } from "../auth/tokens";
import { resetConfig, sqliteFilePath } from "../server/config";
import { database, inTransaction, sqlExecutor } from "./client";
import { BatonError } from "../core/errors";
import { Prisma } from "../generated/prisma/client";
import { ingestPacket } from "../ingest/ingest";
import { watchHandoffFolders } from "../ingest/watch/folder-watcher";
import { freshDatabaseForThisFile } from "@/testing/temp-database";

/**
 * Another process holding SQLite's write lock (a CLI command, a second instance):
 * every kind of write inside inTransaction answers a BatonError "unavailable" (503
 * with Retry-After) after BATON_SQLITE_BUSY_TIMEOUT_MS, never an internal error,
 * and the wait does not freeze the process (better-sqlite3's own busy wait would).
 */

const BUDGET_MS = 1_500;
// Generous against a loaded machine: the frozen waits this guards against were 5 s each.
const MAX_EVENT_LOOP_GAP_MS = 750;

process.env.BATON_SQLITE_BUSY_TIMEOUT_MS = String(BUDGET_MS);
const temp = freshDatabaseForThisFile();

let holder: Database.Database | null = null;

/** A second connection to the same file takes the write lock and keeps it. */
function holdWriteLock(): Database.Database {
  holder = new Database(sqliteFilePath(temp().url));
  holder.exec("BEGIN IMMEDIATE");
  return holder;
}

function release(): void {
  if (holder?.inTransaction) holder.exec("ROLLBACK");
  holder?.close();
  holder = null;
}

/** The longest gap between 10 ms timer ticks while `work` runs: how long the event loop froze. */
async function longestStall<T>(work: () => Promise<T>): Promise<{ stallMs: number; outcome: PromiseSettledResult<T> }> {
  let last = performance.now();
  let stallMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 10);
  try {
    const [outcome] = await Promise.allSettled([work()]);
    return { stallMs, outcome: outcome! };
  } finally {
    clearInterval(timer);
  }
}

function expectUnavailable(outcome: PromiseSettledResult<unknown>): void {
  expect(outcome.status).toBe("rejected");
  const reason = (outcome as PromiseRejectedResult).reason as unknown;
  expect(reason).toBeInstanceOf(BatonError);
  expect((reason as BatonError).code).toBe("unavailable");
  expect((reason as BatonError).status).toBe(503);
  expect((reason as BatonError).retryAfterSeconds).toBe(1);
}

const tokenRow = (name: string) => ({
  id: `tok_${name}`,
  name,
  prefix: `btn_${name.padEnd(8, "x").slice(0, 8)}`,
  secretHash: "0".repeat(64),
  last4: "abcd",
  scopes: "packets:read",
  createdAt: new Date(),
});

describe("a write lock held by another connection", () => {
  beforeAll(async () => {
    resetConfig();
    await database();
  });
  afterEach(release);

  const writes: [string, () => Promise<unknown>][] = [
    // The ORM's error for SQLITE_BUSY is P1008 "Operation has timed out" (the driver's error in meta).
    ["an ORM write first", () => inTransaction((tx) => tx.apiToken.create({ data: tokenRow("orm") }))],
    // Raw statements through Prisma: P2010 naming SQLITE_BUSY.
    ["a raw Prisma statement", () => inTransaction((tx) => tx.$executeRaw`UPDATE "ApiToken" SET "lastUsedAt" = ${new Date()}`)],
    // The ingest path's statements on the adapter's connection: better-sqlite3's own SqliteError.
    [
      "a read, then a write on the adapter's connection",
      () =>
        inTransaction(async (tx) => {
          const sql = await sqlExecutor(tx);
          await sql.query(Prisma.sql`SELECT count(*) FROM "ApiToken"`);
          await sql.execute(Prisma.sql`DELETE FROM "ApiToken" WHERE "id" = ${"nobody"}`);
        }),
    ],
  ];

  for (const [what, write] of writes) {
    it(`makes ${what} answer unavailable (503) within the busy timeout, without freezing the process`, async () => {
      holdWriteLock();
      const started = performance.now();
      const { stallMs, outcome } = await longestStall(write);
      expectUnavailable(outcome);
      expect(performance.now() - started).toBeGreaterThanOrEqual(BUDGET_MS - 50);
      expect(stallMs).toBeLessThan(MAX_EVENT_LOOP_GAP_MS);
    });
  }

  it("lets a waiting write through once the lock is released within the busy timeout", async () => {
    holdWriteLock();
    setTimeout(release, BUDGET_MS / 3);
    await inTransaction((tx) => tx.apiToken.create({ data: tokenRow("after") }));
    const db = await database();
    expect(await db.apiToken.findUnique({ where: { id: "tok_after" } })).not.toBeNull();
  });

  it("does not hold up reads meanwhile (WAL)", async () => {
    holdWriteLock();
    const db = await database();
    const { stallMs, outcome } = await longestStall(() => db.apiToken.count());
    expect(outcome.status).toBe("fulfilled");
    expect(stallMs).toBeLessThan(MAX_EVENT_LOOP_GAP_MS);
  });
});

describe("ingest while another connection holds the write lock", () => {
  afterEach(release);

  const packet = (n: number) => ({
    thread: `busy-ingest-${n}`,
    summary: `packet ${n}`,
    next_action: `step ${n}`,
    open_risks: [{ severity: "low", detail: `risk ${n}` }],
  });
  const source = { kind: "http", actor: "token:busy" } as const;

  it("answers every queued packet unavailable after one busy timeout, and stores them once sent again", async () => {
    holdWriteLock();
    const started = performance.now();
    // Packets keep arriving while the writer waits for the lock: they queue behind its batch.
    const answers = Array.from({ length: 6 }, async (_, n) => {
      await new Promise((resolve) => setTimeout(resolve, n * 150));
      const outcome = (await Promise.allSettled([ingestPacket(packet(n), source)]))[0]!;
      return { outcome, at: performance.now() - started };
    });
    const settled = await Promise.all(answers);
    for (const { outcome } of settled) expectUnavailable(outcome);
    // One busy timeout, not one per batch queued behind it (nor two for a lone packet).
    expect(Math.max(...settled.map(({ at }) => at))).toBeLessThan(BUDGET_MS * 1.8);

    release();
    const db = await database();
    expect(await db.packetVersion.count({ where: { thread: { key: { startsWith: "busy-ingest-" } } } })).toBe(0);
    const stored = await Promise.all(Array.from({ length: 6 }, (_, n) => ingestPacket(packet(n), source)));
    expect(stored.every((result) => !result.duplicate)).toBe(true);
    expect(await db.packetVersion.count({ where: { thread: { key: { startsWith: "busy-ingest-" } } } })).toBe(6);
  });
});

describe("bookkeeping while another connection holds the write lock", () => {
  // These wait out one busy timeout and show what follows it: a short one does
  // (the timeout's own length and the unfrozen loop are checked above with BUDGET_MS).
  const SHORT_BUDGET_MS = 300;
  beforeAll(() => {
    process.env.BATON_SQLITE_BUSY_TIMEOUT_MS = String(SHORT_BUDGET_MS);
    resetConfig();
  });
  afterAll(() => {
    process.env.BATON_SQLITE_BUSY_TIMEOUT_MS = String(BUDGET_MS);
    resetConfig();
  });
  afterEach(release);

  it("still admits an API token whose last-used time is due (a read must not answer 503 for it)", async () => {
    const { token, summary } = await createApiToken("busy-reader", ["packets:read"]);
    holdWriteLock();
    await expect(authenticateBearer(`Bearer ${token}`, "packets:read")).resolves.toMatchObject({ id: summary.id });
  });

  it("still recognises a signed-in person whose session is due a touch", async () => {
    const db = await database();
    const user = await db.user.create({
      data: { id: "usr_busy", username: "busy-person", passwordHash: "unused", role: "viewer", createdAt: new Date() },
    });
    const person = { id: user.id, username: user.username, role: "viewer" } as const;
    const { secret } = await startSession(person, "password");
    // Last seen ten minutes ago: this request would record the time again.
    await inTransaction((tx) => tx.session.updateMany({ where: { userId: user.id }, data: { lastSeenAt: new Date(Date.now() - 10 * 60_000) } }));
    holdWriteLock();
    await expect(personOfSession(secret)).resolves.toMatchObject({ id: user.id });
  });

});

describe("the watched folder while another connection holds the write lock", () => {
  afterEach(release);

  it("takes a watched file again at the next rescan when the database was busy", async () => {
    const quiet = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const folder = mkdtempSync(path.join(tmpdir(), "baton-busy-watch-"));
    const file = path.join(folder, "ws", "handoff.json");
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify({ thread: "busy-watched", summary: "written while locked", next_action: "go on" }));
    holdWriteLock();
    const watcher = watchHandoffFolders([folder], { rescanMs: 200 });
    try {
      await watcher.ready;
      // The first attempt waits out the busy timeout and fails; then the lock goes.
      await vi.waitFor(() => expect(quiet).toHaveBeenCalledWith(expect.stringContaining(file), expect.stringMatching(/busy/)), {
        timeout: BUDGET_MS * 4,
        interval: 50,
      });
      release();
      const db = await database();
      const logged = () => quiet.mock.calls.map((call) => call.map(String).join(" ")).join("\n");
      await vi.waitFor(async () => expect(await db.packetVersion.count({ where: { sourcePath: file } }), `stored; errors logged:\n${logged()}`).toBe(1), {
        timeout: 10_000,
        interval: 100,
      });
    } finally {
      await watcher.close();
      quiet.mockRestore();
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
