import "server-only";
import { Prisma } from "../../generated/prisma/client";
import { SEVERITIES, severityRank } from "../../contract/severity";

/**
 * The risk rules of ./triage-state.ts spelled in SQL, so the list can sort and page in the
 * database (docs/decisions/058-risks-paged-in-sql.md). state-sql.test.ts holds both spellings
 * to the same answers; change them together.
 */

/** A severity column as its rank (severityRank); an unknown word ranks as medium, as asSeverity reads it. */
export function severityRankSql(column: string): Prisma.Sql {
  const cases = SEVERITIES.map((severity) => `WHEN '${severity}' THEN ${severityRank(severity)}`).join(" ");
  return Prisma.raw(`(CASE ${column} ${cases} ELSE ${severityRank("medium")} END)`);
}

/**
 * riskState in SQL: `triage` names the RiskTriage row (its columns may be NULL: no triage),
 * `rank` the risk's severity rank now, `lastSeen` when its newest version arrived.
 */
export function riskStateSql(triage: string, rank: Prisma.Sql, lastSeen: Prisma.Sql, now: Date): Prisma.Sql {
  const t = (column: string) => Prisma.raw(`${triage}."${column}"`);
  return Prisma.sql`(CASE
    WHEN ${t("state")} = 'resolved' THEN (CASE WHEN ${lastSeen} > ${t("updatedAt")} THEN 'regressed' ELSE 'resolved' END)
    WHEN ${t("state")} = 'snoozed' THEN (CASE
      WHEN ${t("snoozedUntil")} IS NOT NULL AND ${t("snoozedUntil")} <= ${now} THEN 'open'
      WHEN ${t("snoozedUntil")} IS NULL AND ${rank} > ${severityRankSql(`${triage}."severityAtTriage"`)} THEN 'open'
      ELSE 'snoozed' END)
    WHEN ${t("state")} = 'acknowledged' THEN 'acknowledged'
    ELSE 'open' END)`;
}
