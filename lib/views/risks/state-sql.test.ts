import { describe, expect, it } from "vitest";
import { sqlExecutor } from "../../db/client";
import { Prisma } from "../../generated/prisma/client";
import { severityRank, type Severity } from "../../contract/severity";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { riskState, type StoredTriage, type TriageAction } from "./triage-state";
import { riskStateSql } from "./state-sql";

/** The SQL spelling of a risk's state (state-sql.ts) gives riskState's answer in every case. */

freshDatabaseForThisFile();

const now = new Date("2026-12-01T12:00:00.000Z");
const triagedAt = new Date("2026-12-01T10:00:00.000Z");
const at = (hours: number) => new Date(now.getTime() + hours * 3_600_000);

const cases: { triage: StoredTriage | null; severity: Severity; lastSeenAt: Date }[] = [];
for (const state of [null, "acknowledged", "resolved", "snoozed"] as (TriageAction | null)[]) {
  for (const snoozedUntil of state === "snoozed" ? [null, at(-1), now, at(1)] : [null]) {
    for (const severityAtTriage of ["low", "high"] as Severity[]) {
      for (const severity of ["medium", "critical"] as Severity[]) {
        for (const lastSeenAt of [at(-3), triagedAt, at(-1)]) {
          cases.push({ triage: state && { state, snoozedUntil, severityAtTriage, updatedAt: triagedAt }, severity, lastSeenAt });
        }
      }
    }
  }
}

describe("riskStateSql", () => {
  it(`agrees with riskState in ${cases.length} cases`, async () => {
    const sql = await sqlExecutor();
    const fromSql: string[] = [];
    for (const [index, sample] of cases.entries()) {
      const threadId = `case-${index}`;
      if (sample.triage) {
        const { state, snoozedUntil, severityAtTriage, updatedAt } = sample.triage;
        await sql.execute(Prisma.sql`INSERT INTO "RiskTriage" ("threadId", "fingerprint", "state", "snoozedUntil", "severityAtTriage", "updatedAt", "updatedBy")
          VALUES (${threadId}, ${"f"}, ${state}, ${snoozedUntil}, ${severityAtTriage}, ${updatedAt}, ${"test"})`);
      }
      const [row] = await sql.query<{ state: string }>(Prisma.sql`
        SELECT ${riskStateSql("rt", Prisma.sql`${severityRank(sample.severity)}`, Prisma.sql`${sample.lastSeenAt}`, now)} AS "state"
        FROM (SELECT 1 AS "one") d LEFT JOIN "RiskTriage" rt ON rt."threadId" = ${threadId}`);
      fromSql.push(row!.state);
    }
    expect(fromSql).toEqual(cases.map((sample) => riskState(sample.triage, sample, now)));
    expect(new Set(fromSql)).toEqual(new Set(["open", "acknowledged", "resolved", "regressed", "snoozed"]));
  });
});
