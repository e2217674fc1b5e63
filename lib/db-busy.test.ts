import Database from "better-sqlite3";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { resetConfig, sqliteFilePath } from "./config";
import { database, inTransaction, sqlExecutor } from "./db";
import { BatonError } from "./errors";
import { Prisma } from "./generated/prisma/client";
import { ingestPacket } from "./ingest/ingest";
import { freshDatabaseForThisFile } from "./testing/temp-database";

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
