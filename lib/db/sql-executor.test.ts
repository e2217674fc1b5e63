import { describe, expect, it, vi } from "vitest";
import { Prisma } from "../generated/prisma/client";
import { testsRunOnPostgresql } from "@/testing/postgresql";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { database, inTransaction, sqlExecutor } from "./client";

freshDatabaseForThisFile();

const AT = new Date("2026-12-02T06:00:00.120Z");

// The hot paths' executor on PostgreSQL: reads outside a transaction go through the driver adapter, not Prisma.
describe.runIf(testsRunOnPostgresql())("the hot paths' reads on PostgreSQL", () => {
  const statement = Prisma.sql`SELECT CAST(${AT} AS TIMESTAMP(3)) AS "at", CAST(${AT} AS TIMESTAMPTZ(3)) AS "atZone",
    CAST('2026-12-02 06:00:00' AS TIMESTAMP(3)) AS "whole", COUNT(*) AS "count", TRUE AS "yes", FALSE AS "no",
    CAST(7 AS INTEGER) AS "small", CAST(2.5 AS DOUBLE PRECISION) AS "double", ${"a'text"} AS "text", CAST(NULL AS TEXT) AS "none",
    CAST(${'{"a":[1]}'} AS JSONB) AS "json", CAST(${AT} AS TIMESTAMP(3)) = CAST('2026-12-02 06:00:00.12' AS TIMESTAMP(3)) AS "argIsUtc"`;

  it("skip Prisma's pipeline and read what Prisma's $queryRaw reads, shaped alike", async () => {
    const db = await database();
    await db.$queryRaw`SELECT 1`; // Prisma connects its adapter on first use.
    const viaPrisma = vi.spyOn(db, "$queryRaw");
    const direct = await (await sqlExecutor()).query<Record<string, unknown>>(statement);
    expect(viaPrisma).not.toHaveBeenCalled();
    viaPrisma.mockRestore();
    const throughPrisma = await inTransaction(async (tx) => (await sqlExecutor(tx)).query<Record<string, unknown>>(statement), { ledger: false });
    expect(direct).toEqual(throughPrisma);
    expect(direct).toEqual([
      {
        at: "2026-12-02T06:00:00.120+00:00",
        atZone: "2026-12-02T06:00:00.120+00:00",
        whole: "2026-12-02T06:00:00.000+00:00",
        count: 1,
        yes: 1,
        no: 0,
        small: 7,
        double: 2.5,
        text: "a'text",
        none: null,
        json: { a: [1] },
        argIsUtc: 1,
      },
    ]);
  });
});
