import { describe, expect, it } from "vitest";
import { ledgerEventsInsert } from "../events/ledger";
import { THREAD_COLUMNS, THREAD_UPDATED_COLUMNS, threadFor, threadRow } from "../ingest/thread-state";
import { RISK_COLUMNS } from "../ingest/version-rows";
import { statementTextsOf } from "@/testing/count-statements";
import { testsRunOnPostgresql } from "@/testing/postgresql";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { database, inSqlTransaction } from "./client";
import { insertTogether, updateOnConflict, type TableInsert } from "./sql";

/** Several tables' rows in one statement on PostgreSQL (decision 097), one after another on SQLite. */

freshDatabaseForThisFile();

const actor = "test:insert-together";
const events = (kind: string, count: number): TableInsert =>
  ledgerEventsInsert(
    Array.from({ length: count }, (_, index) => ({ kind: "heartbeat" as const, actor, data: { kind, index } })),
    new Date(),
  );
/** The INSERT statements `work` ran (not the transaction's own: BEGIN, the lock, COMMIT). */
const insertsOf = async (work: () => Promise<unknown>) => (await statementTextsOf(work)).filter((text) => /\bINSERT INTO\b/.test(text));
const storedEvents = async (kind: string) =>
  (await (await database()).ledgerEvent.findMany({ where: { actor }, orderBy: { seq: "asc" } }))
    .map((event) => JSON.parse(event.data) as { kind: string; index: number })
    .filter((data) => data.kind === kind);

describe("insertTogether", () => {
  it("sends consecutive tables as one statement on PostgreSQL, and a table taken again starts the next", async () => {
    const thread = threadFor(new Map(), "together-1", new Date());
    const inserted = threadRow(thread, false);
    thread.topic = "updated in the same batch";
    const statements = await insertsOf(() =>
      inSqlTransaction((sql) =>
        insertTogether(sql, [
          { table: "Thread", columns: THREAD_COLUMNS, rows: [inserted] },
          events("first", 2),
          { table: "Risk", columns: RISK_COLUMNS, rows: [] },
          { table: "Thread", columns: THREAD_COLUMNS, rows: [threadRow(thread, true)], onConflict: updateOnConflict("id", THREAD_UPDATED_COLUMNS) },
          events("first", 1),
        ]),
      ),
    );
    // PostgreSQL: the thread and two events; then the thread again and the third event. SQLite: a statement per non-empty entry.
    expect(statements.length).toBe(testsRunOnPostgresql() ? 2 : 4);
    if (testsRunOnPostgresql()) expect(statements[0]).toMatch(/^WITH "w0" AS \(INSERT INTO "Thread"/);
    const stored = await (await database()).thread.findUniqueOrThrow({ where: { key: "together-1" } });
    expect(stored.topic).toBe("updated in the same batch");
    expect((await storedEvents("first")).map((data) => data.index)).toEqual([0, 1, 0]);
  });

  it("splits rows past the parameter limit into more statements, in order", async () => {
    // 5,001 events of 6 columns: 30,006 parameters, past the 30,000 of one statement on PostgreSQL (8,000 on SQLite).
    const statements = await insertsOf(() => inSqlTransaction((sql) => insertTogether(sql, [events("many", 5_001)])));
    expect(statements.length).toBe(testsRunOnPostgresql() ? 2 : 4);
    const stored = await storedEvents("many");
    expect(stored.length).toBe(5_001);
    expect(stored.every((data, index) => data.index === index)).toBe(true);
  });

  it("stores none of the rows when one of them is refused", async () => {
    const orphanRisk = ["rk-orphan", "pv-missing", "th-missing", 0, "r1", "high", "high", "a risk of no version", null, "fingerprint"];
    await expect(
      inSqlTransaction((sql) => insertTogether(sql, [events("refused", 2), { table: "Risk", columns: RISK_COLUMNS, rows: [orphanRisk] }])),
    ).rejects.toThrow(/foreign ?key/i);
    expect(await storedEvents("refused")).toEqual([]);
  });
});
