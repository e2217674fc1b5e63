import { setTimeout as sleep } from "node:timers/promises";
import type { SqlQuery, Transaction } from "@prisma/driver-adapter-utils";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { closeDatabase, database, inTransaction } from "./client";
import { listenOnEveryConnection, POSTGRESQL_POOL_SIZE, releaseOnFailedEnd } from "./postgresql";
import { errorResponse } from "../http/respond";
import { testsRunOnPostgresql } from "@/testing/postgresql";
import { useTempDatabase } from "@/testing/temp-database";

/** A stand-in for the adapter's transaction: records what it was asked; the listed statements fail. */
function fakeTransaction(failing: string[]) {
  const calls: string[] = [];
  const transaction = {
    provider: "postgres",
    adapterName: "fake",
    options: { usePhantomQuery: false },
    async queryRaw() {
      throw new Error("not used");
    },
    async executeRaw(query: SqlQuery) {
      calls.push(query.sql);
      if (failing.includes(query.sql)) throw new Error("Client has encountered a connection error and is not queryable");
      return 0;
    },
    async commit() {
      calls.push("commit()");
    },
    async rollback() {
      calls.push("rollback()");
    },
  } as unknown as Transaction;
  return { transaction: releaseOnFailedEnd(transaction), calls };
}
const sql = (text: string): SqlQuery => ({ sql: text, args: [], argTypes: [] });

describe("releaseOnFailedEnd", () => {
  it("gives the connection back when ROLLBACK or COMMIT fails (Prisma then never would), once", async () => {
    for (const end of ["ROLLBACK", "COMMIT"]) {
      const { transaction, calls } = fakeTransaction([end]);
      await expect(transaction.executeRaw(sql(end))).rejects.toThrow(/not queryable/);
      await transaction.rollback();
      await transaction.commit();
      expect(calls).toEqual([end, "rollback()"]);
    }
  });

  it("leaves other failures, and ends that succeed, to Prisma", async () => {
    const { transaction, calls } = fakeTransaction(['SELECT 1 AS "locked"']);
    await expect(transaction.executeRaw(sql('SELECT 1 AS "locked"'))).rejects.toThrow();
    await transaction.executeRaw(sql("COMMIT"));
    await transaction.commit();
    expect(calls).toEqual(['SELECT 1 AS "locked"', "COMMIT", "commit()"]);
  });
});

// The real thing: this process's connections terminated by the server, as in a restart.
describe.runIf(testsRunOnPostgresql())("PostgreSQL connections terminated under Baton", () => {
  let temp: Awaited<ReturnType<typeof useTempDatabase>>;
  let admin: pg.Client;

  beforeAll(async () => {
    temp = await useTempDatabase();
    admin = new pg.Client({ connectionString: temp.url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await temp?.dispose();
  });
  afterEach(() => vi.restoreAllMocks());

  /** Every other client connection to the test database (not autovacuum: a superuser's), as a restart or pg_terminate_backend does. */
  async function cutConnections(): Promise<number> {
    const result = await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`);
    // Until the terminated sockets have told their clients.
    await sleep(100);
    return result.rowCount ?? 0;
  }

  /** A transaction whose connection is cut in the middle; resolves to its error. */
  async function cutTransaction(): Promise<unknown> {
    const db = await database();
    return db
      .$transaction(async (tx) => {
        await tx.workerCursor.count();
        await cutConnections();
        return tx.workerCursor.count();
      })
      .then(() => null, (error: unknown) => error);
  }

  const within = <T>(promise: Promise<T>, ms: number) =>
    Promise.race([promise, sleep(ms).then(() => Promise.reject(new Error(`no answer within ${ms} ms: a leaked pool?`)))]);

  it("a write transaction cut before it finished runs again on a new connection; the first run left nothing", async () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const runs: number[] = [];
    const result = await inTransaction(async (tx) => {
      runs.push(runs.length + 1);
      await tx.workerCursor.create({ data: { name: `cut-${runs.length}`, seq: runs.length } });
      if (runs.length === 1) expect(await cutConnections()).toBeGreaterThan(0);
      await tx.workerCursor.create({ data: { name: `after-cut-${runs.length}`, seq: runs.length } });
      return runs.length;
    });
    expect(result).toBe(2);
    const rows = await (await database()).workerCursor.findMany({ where: { name: { contains: "cut" } }, orderBy: { name: "asc" } });
    expect(rows).toEqual([
      { name: "after-cut-2", seq: 2 },
      { name: "cut-2", seq: 2 },
    ]);
  });

  it("a statement on a terminated connection is answered 503 with Retry-After, not 500", async () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const failure = await cutTransaction();
    expect(failure).not.toBeNull();
    const response = errorResponse(failure);
    expect(response.status, String(failure)).toBe(503);
    expect(response.headers.get("retry-after")).toBe("1");
  });

  it("more cut transactions than the pool has connections: the pool loses none, queries still answer", async () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    for (let cut = 0; cut <= POSTGRESQL_POOL_SIZE; cut++) expect(await cutTransaction()).not.toBeNull();
    const db = await database();
    // As many at once as the pool holds, and a transaction: each needs a connection of its own.
    await within(Promise.all(Array.from({ length: POSTGRESQL_POOL_SIZE }, () => db.workerCursor.count())), 5_000);
    await within(inTransaction((tx) => tx.workerCursor.count()), 5_000);
    // And the pool can be closed: no connection is still lent out.
    await within(closeDatabase(), 5_000);
    await expect((await database()).workerCursor.count()).resolves.toBeGreaterThan(0);
  });

  it("a connection's error outside any query is heard, not an uncaught exception", async () => {
    // What happens when a new connection is ready and terminated in one read: the pool has handed it out, nobody listens yet.
    const bare = new pg.Pool({ connectionString: temp.url, max: 1 });
    const listened = new pg.Pool({ connectionString: temp.url, max: 1 });
    listenOnEveryConnection(listened);
    try {
      const unheard = await bare.connect();
      expect(() => unheard.emit("error", new Error("terminated"))).toThrow("terminated");
      unheard.release(true);
      const heard = await listened.connect();
      expect(() => heard.emit("error", new Error("terminated"))).not.toThrow();
      heard.release(true);
    } finally {
      await Promise.all([bare.end(), listened.end()]);
    }
  });

  it("connections cut again and again under load: no uncaught exception, every failure a 503", async () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on("uncaughtException", onUncaught);
    const failures: unknown[] = [];
    let done = 0;
    let stop = false;
    try {
      const db = await database();
      const lane = async (lane: number) => {
        for (let round = 0; !stop; round++) {
          await inTransaction((tx) => tx.workerCursor.upsert({ where: { name: `lane-${lane}` }, create: { name: `lane-${lane}`, seq: round }, update: { seq: round } })).then(
            () => done++,
            (error: unknown) => failures.push(error),
          );
          await db.workerCursor.count().then(() => done++, (error: unknown) => failures.push(error));
        }
      };
      const lanes = Promise.all(Array.from({ length: 6 }, (_, index) => lane(index)));
      for (let cut = 0; cut < 5; cut++) {
        await sleep(200);
        await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`);
      }
      await sleep(300);
      stop = true;
      await lanes;
    } finally {
      process.off("uncaughtException", onUncaught);
    }
    expect(uncaught).toEqual([]);
    expect(failures.map((failure) => errorResponse(failure).status).filter((status) => status !== 503)).toEqual([]);
    expect(done).toBeGreaterThan(failures.length);
  });
});
