import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { database, inTransaction } from "./db";
import { errorResponse } from "./http/respond";
import { testsRunOnPostgresql } from "./testing/postgresql";
import { useTempDatabase } from "./testing/temp-database";

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

  /** Every other connection to the test database, as a restart or pg_terminate_backend does. */
  async function cutConnections(): Promise<number> {
    const result = await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`);
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
});
