import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Prisma } from "../generated/prisma/client";
import { preparePacket } from "../contract/prepare";
import { recordSessionEvent } from "../board/watchdog/session-events";
import { ingestPacket } from "../ingest/ingest";
import { storeBatch } from "../ingest/store-batch";
import type { PendingPacket } from "../ingest/types";
import { statementsOf, statementTextsOf } from "@/testing/count-statements";
import { testsRunOnPostgresql } from "@/testing/postgresql";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { database, inSqlTransaction, inTransaction, isUniqueViolation, type SqlExecutor } from "./client";

/** The hot writers' transactions of raw statements (inSqlTransaction): the driver adapter's own, on both databases. */

const temp = freshDatabaseForThisFile();
/** On PostgreSQL, a session of the test's own beside Baton's pool, to watch and hold locks. */
let admin: pg.Client;

beforeAll(async () => {
  if (!testsRunOnPostgresql()) return;
  admin = new pg.Client({ connectionString: temp().url });
  await admin.connect();
});
afterAll(async () => {
  await admin?.end();
});

/** Backends of the test database (not ours) waiting for a lock: the writers' (advisory) or a row's (transactionid). */
async function waitingForLock(locktype: "advisory" | "transactionid"): Promise<number> {
  const result = await admin.query<{ waiting: number }>(
    `SELECT COUNT(*)::int AS "waiting" FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE NOT l.granted AND l.locktype = $1 AND a.datname = current_database() AND a.pid <> pg_backend_pid()`,
    [locktype],
  );
  return result.rows[0]!.waiting;
}

/**
 * Until a second writer waits for the first: on PostgreSQL for the writers' advisory lock; on SQLite
 * for the adapter's lock in this process, which it asked for before the event loop's next turns.
 */
async function secondWaits(): Promise<void> {
  if (testsRunOnPostgresql()) await vi.waitFor(async () => expect(await waitingForLock("advisory")).toBe(1), { timeout: 5_000, interval: 20 });
  else await sleep(50);
}

const source = { kind: "http", actor: "token:sql-transaction" } as const;

function pending(thread: string, n: number): PendingPacket {
  const receivedAt = new Date();
  const packet = preparePacket({ thread, summary: `packet ${n}`, next_action: `step ${n}` }, receivedAt.getTime());
  return { packet, reports: [], source, receivedAt, bodyHash: "" };
}

/** A promise and the function that resolves it: one test step waits for another's. */
function signal(): { happened: Promise<void>; fire: () => void } {
  let fire!: () => void;
  const happened = new Promise<void>((resolve) => (fire = resolve));
  return { happened, fire };
}

const insertCursor = (sql: SqlExecutor, name: string, seq = 0) =>
  sql.execute(Prisma.sql`INSERT INTO "WorkerCursor" ("name", "seq") VALUES (${name}, ${seq})`);

async function cursorNames(prefix: string): Promise<string[]> {
  const rows = await (await database()).workerCursor.findMany({ where: { name: { startsWith: prefix } }, orderBy: { name: "asc" } });
  return rows.map((row) => row.name);
}

describe("a transaction of raw statements", () => {
  it("rolls back whole when its work fails midway: nothing half-written", async () => {
    const failure = await inSqlTransaction(async (sql) => {
      await storeBatch(sql, [pending("half-written", 1)]);
      await insertCursor(sql, "half-written");
      throw new Error("failed after writing");
    }).then(() => null, (error: unknown) => error);
    expect(String(failure)).toMatch(/failed after writing/);
    const db = await database();
    expect(await db.thread.count({ where: { key: "half-written" } })).toBe(0);
    expect(await db.ledgerEvent.count({ where: { threadKey: "half-written" } })).toBe(0);
    expect(await cursorNames("half-written")).toEqual([]);
  });

  it("rolls back whole on a database error (on PostgreSQL named a unique violation, which the batch writer retries)", async () => {
    const failure = await inSqlTransaction(async (sql) => {
      await storeBatch(sql, [pending("unique-clash", 1)]);
      await insertCursor(sql, "unique-clash");
      await insertCursor(sql, "unique-clash");
    }).then(() => null, (error: unknown) => error);
    expect(failure).not.toBeNull();
    // SQLite's own "UNIQUE constraint failed" is not one (lib/db/client.ts isUniqueViolation): its one writer never races.
    if (testsRunOnPostgresql()) expect(isUniqueViolation(failure), String(failure)).toBe(true);
    expect(await (await database()).thread.count({ where: { key: "unique-clash" } })).toBe(0);
    expect(await cursorNames("unique-clash")).toEqual([]);
  });

  it("answers with the rows a statement changed", async () => {
    const changed = await inSqlTransaction(async (sql) => {
      await insertCursor(sql, "counted-a");
      await insertCursor(sql, "counted-b");
      return sql.execute(Prisma.sql`UPDATE "WorkerCursor" SET "seq" = 1 WHERE "name" LIKE 'counted-%'`);
    });
    expect(changed).toBe(2);
  });

  it("sends nothing through Prisma's pipeline: an ingest and a heartbeat", async () => {
    const db = await database();
    const throughPrisma = [vi.spyOn(db, "$transaction"), vi.spyOn(db, "$queryRaw"), vi.spyOn(db, "$executeRaw")];
    try {
      const stored = await ingestPacket({ thread: "direct", summary: "stored directly", next_action: "beat" }, source);
      const beat = await recordSessionEvent("direct", { kind: "heartbeat" }, { actor: source.actor });
      const quietBeat = await recordSessionEvent("direct", { kind: "heartbeat" }, { actor: source.actor });
      expect(stored.duplicate).toBe(false);
      expect(beat).toMatchObject({ applied: true, recorded: true, column: "running" });
      expect(quietBeat).toMatchObject({ applied: true, recorded: false, column: "running" });
      for (const spy of throughPrisma) expect(spy).not.toHaveBeenCalled();
    } finally {
      for (const spy of throughPrisma) spy.mockRestore();
    }
  });

  it("takes few statements: a packet, a recorded heartbeat, a quiet one", async () => {
    await ingestPacket({ thread: "counted", summary: "first", next_action: "go" }, source);
    const packet = await statementsOf(() =>
      ingestPacket(
        {
          thread: "counted",
          summary: "second",
          next_action: "go on",
          open_risks: [{ detail: "a risk", severity: "high" }],
          questions_for_human: [{ id: "q1", question: "which way?" }],
          failed_attempts: [{ attempt: "npm test", reason: "still fails" }],
        },
        source,
      ),
    );
    const recorded = await statementsOf(() => recordSessionEvent("counted", { kind: "heartbeat" }, { actor: source.actor }));
    const quiet = await statementsOf(() => recordSessionEvent("counted", { kind: "heartbeat" }, { actor: source.actor }));
    // PostgreSQL: through Prisma's transactions (BEGIN, the lock and COMMIT included) they were 9, 8 and 5: the last
    // arrival sequence comes with the threads, and a quiet heartbeat needs no transaction; since decision 088 a quiet
    // heartbeat is one statement (it was 3), and a recorded one's first is that statement; since decision 092 a recorded
    // one's writes are one statement in the writers' turn (it was 8: BEGIN, the lock, 4 statements, COMMIT); since
    // decision 097 a packet's rows of every table are one statement (this packet's were 6: the version, its risk,
    // question and failed attempt, the thread, the ledger). SQLite: as through Prisma's, a statement per table.
    expect({ packet, recorded, quiet }).toEqual(testsRunOnPostgresql() ? { packet: 6, recorded: 5, quiet: 1 } : { packet: 10, recorded: 7, quiet: 5 });
  });

  it("two writers ingesting one thread take turns", async () => {
    const { happened: gate, fire: openGate } = signal();
    const { happened: stored, fire: firstStored } = signal();
    const first = inSqlTransaction(async (sql) => {
      const result = await storeBatch(sql, [pending("one-thread", 1)]);
      firstStored();
      await gate;
      return result;
    });
    await stored;
    let secondBegan = false;
    const second = inSqlTransaction(async (sql) => {
      secondBegan = true;
      return storeBatch(sql, [pending("one-thread", 2)]);
    });
    await secondWaits();
    expect(secondBegan).toBe(false);
    openGate();
    const [one, two] = await Promise.all([first, second]);
    const [oneResult, twoResult] = [one.results[0], two.results[0]] as { packet_id: string; duplicate: boolean }[];
    expect([oneResult!.duplicate, twoResult!.duplicate]).toEqual([false, false]);
    const db = await database();
    const thread = await db.thread.findUniqueOrThrow({ where: { key: "one-thread" } });
    expect(thread.activeVersionId).toBe(twoResult!.packet_id);
    const versions = await db.packetVersion.findMany({ where: { threadId: thread.id }, orderBy: { arrivalSeq: "asc" } });
    expect(versions.map((version) => version.id)).toEqual([oneResult!.packet_id, twoResult!.packet_id]);
    expect(versions[1]!.arrivalSeq).toBe(versions[0]!.arrivalSeq! + 1);
  });

  // On SQLite both share the one connection: without one lock the ORM's BEGIN would fail inside the raw
  // transaction, or its write would be rolled back with the other's.
  for (const [first, then] of [["raw", "orm"], ["orm", "raw"]] as const) {
    it(`${first === "raw" ? "a raw transaction and an ORM write" : "an ORM write and a raw transaction"} started together take turns: the one rolled back takes none of the other's rows`, async () => {
      const { happened: written, fire: wrote } = signal();
      // The first writes, yields to the event loop, writes again and fails: rolled back whole.
      const failing = async (write: (name: string) => Promise<unknown>) => {
        await write(`${first}-first-1`);
        wrote();
        await sleep(20);
        await write(`${first}-first-2`);
        throw new Error(`${first} failed after writing`);
      };
      const rolledBack = (
        first === "raw"
          ? inSqlTransaction((sql) => failing((name) => insertCursor(sql, name)))
          : inTransaction((tx) => failing((name) => tx.workerCursor.create({ data: { name, seq: 0 } })))
      ).then(() => null, (error: unknown) => error);
      await written;
      const committed =
        then === "raw"
          ? inSqlTransaction((sql) => insertCursor(sql, `${then}-second-kept`))
          : inTransaction((tx) => tx.workerCursor.create({ data: { name: `${then}-second-kept`, seq: 0 } }));
      await committed;
      expect(String(await rolledBack)).toMatch(new RegExp(`${first} failed after writing`));
      expect(await cursorNames(`${first}-first-`)).toEqual([]);
      expect(await cursorNames(`${then}-second-`)).toEqual([`${then}-second-kept`]);
    });
  }

  it("a transaction whose work outlasts its timeout is rolled back at the timeout and refuses further statements", async () => {
    const { happened: paused, fire: resume } = signal();
    const { happened: written, fire: wrote } = signal();
    const slow = inSqlTransaction(
      async (sql) => {
        await insertCursor(sql, "slow");
        wrote();
        await paused;
        await insertCursor(sql, "slow-after");
      },
      { timeoutMs: 300 },
    ).then(() => null, (error: unknown) => error);
    // Another writer gets the lock while the slow work is still paused: the timeout gave it up.
    await written;
    await inSqlTransaction((sql) => insertCursor(sql, "next-writer"));
    resume();
    expect(String(await slow)).toMatch(/expired transaction/);
    expect(await cursorNames("slow")).toEqual([]);
    expect(await cursorNames("next-writer")).toEqual(["next-writer"]);
  });
});

describe.runIf(!testsRunOnPostgresql())("a transaction of raw statements on SQLite", () => {
  it("a COMMIT that fails is rolled back before the next writer gets the connection", async () => {
    const now = new Date();
    const failure = await inSqlTransaction(async (sql) => {
      // Foreign keys checked at COMMIT: the COMMIT itself fails, and SQLite keeps the transaction open.
      await sql.execute(Prisma.sql`PRAGMA defer_foreign_keys = ON`);
      await insertCursor(sql, "before-failed-commit");
      await sql.execute(
        Prisma.sql`INSERT INTO "Session" ("id", "userId", "createdAt", "lastSeenAt", "expiresAt") VALUES (${"ses_orphan"}, ${"usr_nobody"}, ${now}, ${now}, ${now})`,
      );
    }).then(() => null, (error: unknown) => error);
    expect(String(failure)).toMatch(/FOREIGN KEY constraint failed|ForeignKeyConstraintViolation/);
    // Through Prisma's transactions the failed COMMIT kept the adapter's lock: this waited for ever.
    await inSqlTransaction((sql) => insertCursor(sql, "after-failed-commit"));
    await inTransaction((tx) => tx.workerCursor.create({ data: { name: "after-failed-commit-orm", seq: 0 } }));
    expect(await cursorNames("before-failed-commit")).toEqual([]);
    expect(await cursorNames("after-failed-commit")).toEqual(["after-failed-commit", "after-failed-commit-orm"]);
  });
});

describe.runIf(testsRunOnPostgresql())("a transaction of raw statements on PostgreSQL", () => {
  it("a recorded heartbeat's COMMIT does not wait for the WAL flush; a packet's and a session's other reports do", async () => {
    /** Whether `write` turned synchronous_commit off, from the statements this process sent. */
    const synchronousCommit = async (write: () => Promise<unknown>) =>
      (await statementTextsOf(write)).some((text) => text.includes("synchronous_commit = off")) ? "off" : "on";
    await ingestPacket({ thread: "flushed", summary: "first", next_action: "go" }, source);
    expect(await synchronousCommit(() => ingestPacket({ thread: "flushed", summary: "second", next_action: "go on" }, source))).toBe("on");
    expect(await synchronousCommit(() => recordSessionEvent("flushed", { kind: "session_started" }, { actor: source.actor }))).toBe("on");
    expect(await synchronousCommit(() => recordSessionEvent("flushed", { kind: "heartbeat" }, { actor: source.actor }))).toBe("off");
    const [latest] = (await admin.query(`SELECT "kind" FROM "LedgerEvent" WHERE "threadKey" = 'flushed' ORDER BY "seq" DESC LIMIT 1`)).rows;
    expect(latest).toEqual({ kind: "heartbeat" });
  });

  it("a write outside the ledger does not wait for the writers' lock", async () => {
    const { happened: gate, fire: openGate } = signal();
    const { happened: holding, fire: locked } = signal();
    const ledgerWriter = inSqlTransaction(async (sql) => {
      await insertCursor(sql, "ledger-writer");
      locked();
      await gate;
    });
    await holding;
    await inSqlTransaction(async (sql) => insertCursor(sql, "outside-the-ledger"), { ledger: false });
    expect(await cursorNames("outside-the-ledger")).toEqual(["outside-the-ledger"]);
    openGate();
    await ledgerWriter;
  });

  it("a connection lost before COMMIT runs the work again on a new connection; the first run left nothing", async () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const runs: number[] = [];
    const result = await inSqlTransaction(async (sql) => {
      runs.push(runs.length + 1);
      await insertCursor(sql, `lost-${runs.length}`, runs.length);
      if (runs.length === 1) {
        const cut = await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
        );
        expect(cut.rowCount ?? 0).toBeGreaterThan(0);
        // Until the terminated sockets have told their clients.
        await sleep(100);
      }
      await insertCursor(sql, `lost-after-${runs.length}`, runs.length);
      return runs.length;
    });
    vi.restoreAllMocks();
    expect(result).toBe(2);
    expect(await cursorNames("lost-")).toEqual(["lost-2", "lost-after-2"]);
  });

  it("a statement stuck past the transaction's timeout is cancelled by the server, so the writers' lock is free again", async () => {
    await inSqlTransaction((sql) => insertCursor(sql, "held"));
    // Another session holds the row: the update below waits for it without end.
    await admin.query("BEGIN");
    await admin.query(`SELECT * FROM "WorkerCursor" WHERE "name" = 'held' FOR UPDATE`);
    try {
      const stuck = inSqlTransaction((sql) => sql.execute(Prisma.sql`UPDATE "WorkerCursor" SET "seq" = 1 WHERE "name" = 'held'`), {
        timeoutMs: 300,
      }).then(() => null, (error: unknown) => error);
      await vi.waitFor(async () => expect(await waitingForLock("transactionid")).toBe(1), { timeout: 5_000, interval: 20 });
      // The next writer waits for the lock the stuck transaction holds, and gets it while the row is still held.
      await inSqlTransaction((sql) => insertCursor(sql, "after-stuck"));
      // The server cancelled it (Baton's own ROLLBACK waits behind it); it fails as timed out either way.
      expect(String(await stuck)).toMatch(/statement timeout|expired transaction/);
    } finally {
      await admin.query("ROLLBACK");
    }
    expect(await cursorNames("after-stuck")).toEqual(["after-stuck"]);
  });
});
