import "server-only";
import { sqlExecutor, type Tx } from "../../db/client";
import { Prisma } from "../../generated/prisma/client";
import { isSeverity, severityRank, type Severity } from "../../contract/severity";
import { needsAttention, riskState, type RiskState, type StoredTriage, type TriageAction } from "./triage-state";
import { dialectSql, inChunks } from "../../db/sql";
import { databaseDialect } from "../../db/client";
import { containsPattern } from "../lessons/queries";

/**
 * The risks of active packets (non-archived threads), each with its triage and
 * its state now: what the risks view lists, the board counts and a triage
 * action checks. One statement, whatever the number of threads.
 */

export interface ActiveRisk {
  threadId: string;
  threadKey: string;
  agent: string | null;
  /** The thread's active packet. */
  versionId: string;
  fingerprint: string;
  /** The highest severity among the packet's risks with this fingerprint. */
  severity: Severity;
  severityRaw: string | null;
  /** The wording of the first of them. */
  detail: string;
  mitigation: string | null;
  /** When the active packet arrived: the risk's latest sighting (lib/views/risks/triage-state.ts). */
  activeReceivedAt: Date;
  triage: (StoredTriage & { updatedBy: string }) | null;
  state: RiskState;
}

interface Row {
  threadId: string;
  threadKey: string;
  agent: string | null;
  versionId: string;
  fingerprint: string;
  severity: string;
  severityRaw: string | null;
  detail: string;
  mitigation: string | null;
  receivedAt: string | Date;
  triageState: string | null;
  snoozedUntil: string | Date | null;
  severityAtTriage: string | null;
  triagedAt: string | Date | null;
  triagedBy: string | null;
}

/** SQLite hands back the adapter's ISO text; PostgreSQL would hand back dates. */
export const asDate = (value: string | Date) => (value instanceof Date ? value : new Date(value));
const asSeverity = (value: string | null): Severity => (isSeverity(value) ? value : "medium");

/** Well under the bound-parameter limits of SQLite and PostgreSQL. */
const IDS_PER_STATEMENT = 5000;

function triageOf(row: Row): ActiveRisk["triage"] {
  if (!row.triageState || !row.triagedAt) return null;
  return {
    state: row.triageState as TriageAction,
    snoozedUntil: row.snoozedUntil === null ? null : asDate(row.snoozedUntil),
    severityAtTriage: asSeverity(row.severityAtTriage),
    updatedAt: asDate(row.triagedAt),
    updatedBy: row.triagedBy ?? "",
  };
}

async function readRows(restriction: Prisma.Sql, tx?: Tx): Promise<Row[]> {
  const sql = await sqlExecutor(tx);
  return sql.query<Row>(Prisma.sql`
    SELECT t."id" AS "threadId", t."key" AS "threadKey", t."agent" AS "agent",
      r."versionId" AS "versionId", r."fingerprint" AS "fingerprint", r."severity" AS "severity",
      r."severityRaw" AS "severityRaw", r."detail" AS "detail", r."mitigation" AS "mitigation",
      v."receivedAt" AS "receivedAt",
      rt."state" AS "triageState", rt."snoozedUntil" AS "snoozedUntil", rt."severityAtTriage" AS "severityAtTriage",
      rt."updatedAt" AS "triagedAt", rt."updatedBy" AS "triagedBy"
    FROM "Thread" t
    JOIN "PacketVersion" v ON v."id" = t."activeVersionId"
    JOIN "Risk" r ON r."versionId" = v."id"
    LEFT JOIN "RiskTriage" rt ON rt."threadId" = t."id" AND rt."fingerprint" = r."fingerprint"
    WHERE t."archived" = ${false} ${restriction}
    ORDER BY r."versionId", r."position"`);
}

/** Rows to risks: one per thread and fingerprint, at the highest severity the packet gives it. */
function toActiveRisks(rows: Row[], now: Date): ActiveRisk[] {
  const byKey = new Map<string, ActiveRisk>();
  for (const row of rows) {
    const key = `${row.threadId}\u0000${row.fingerprint}`;
    const severity = asSeverity(row.severity);
    const seen = byKey.get(key);
    if (seen) {
      if (severityRank(severity) > severityRank(seen.severity)) Object.assign(seen, { severity, severityRaw: row.severityRaw });
      continue;
    }
    byKey.set(key, {
      threadId: row.threadId,
      threadKey: row.threadKey,
      agent: row.agent,
      versionId: row.versionId,
      fingerprint: row.fingerprint,
      severity,
      severityRaw: row.severityRaw,
      detail: row.detail,
      mitigation: row.mitigation,
      activeReceivedAt: asDate(row.receivedAt),
      triage: triageOf(row),
      state: "open",
    });
  }
  const risks = [...byKey.values()];
  for (const risk of risks) risk.state = riskState(risk.triage, { severity: risk.severity, lastSeenAt: risk.activeReceivedAt }, now);
  return risks;
}

/**
 * The rows of active risks (`r`, of thread `t`) whose detail, thread key or agent holds `text`
 * (ASCII letters in any case); nothing without one. A risk matches on any of its wordings in the packet.
 */
export function riskTextFilter(text: string | undefined): Prisma.Sql {
  if (!text) return Prisma.empty;
  const like = Prisma.sql`${dialectSql.like(databaseDialect())} ${containsPattern(text)} ESCAPE '\\'`;
  return Prisma.sql`AND (r."detail" ${like} OR t."key" ${like} OR t."agent" ${like})`;
}

/**
 * Active risks of every non-archived thread, or only of the given active
 * versions, thread keys or fingerprints (and matching `text`). Pass `tx` to read inside a write transaction.
 */
export async function readActiveRisks(options: {
  now: Date;
  versionIds?: readonly string[];
  threadKeys?: readonly string[];
  fingerprints?: readonly string[];
  text?: string;
  tx?: Tx;
}): Promise<ActiveRisk[]> {
  const { now, versionIds, threadKeys, fingerprints, tx } = options;
  const text = riskTextFilter(options.text);
  let rows: Row[];
  if (versionIds) rows = await inChunks(versionIds, (ids) => readRows(Prisma.sql`AND t."activeVersionId" IN (${Prisma.join(ids)}) ${text}`, tx), IDS_PER_STATEMENT);
  else if (threadKeys) rows = await inChunks(threadKeys, (keys) => readRows(Prisma.sql`AND t."key" IN (${Prisma.join(keys)}) ${text}`, tx), IDS_PER_STATEMENT);
  else if (fingerprints) rows = await inChunks(fingerprints, (prints) => readRows(Prisma.sql`AND r."fingerprint" IN (${Prisma.join(prints)}) ${text}`, tx), IDS_PER_STATEMENT);
  else rows = await readRows(text, tx);
  return toActiveRisks(rows, now);
}

/** What a card's column needs to know of its risks (lib/board/columns.ts). */
export interface RiskAttention {
  /** Critical and high risks that are open: never triaged, or their snooze ended. */
  unacknowledgedSevere: number;
  /** Risks of any severity that were resolved and came back. */
  regressed: number;
}

const SEVERE: ReadonlySet<Severity> = new Set(["critical", "high"]);

/** Per active version: its risks that need a person. Versions without any are left out. One statement for all. */
export async function riskAttentionByVersion(versionIds: readonly string[], now: Date): Promise<Map<string, RiskAttention>> {
  const attention = new Map<string, RiskAttention>();
  if (!versionIds.length) return attention;
  // Only severe or triaged risks can count: an untriaged risk below high needs nobody. A
  // triage covers every row of its fingerprint, so each risk kept is read whole.
  const severe = Prisma.join([...SEVERE].map((severity) => Prisma.sql`${severity}`));
  const rows = await inChunks(
    versionIds,
    (ids) => readRows(Prisma.sql`AND t."activeVersionId" IN (${Prisma.join(ids)}) AND (r."severity" IN (${severe}) OR rt."state" IS NOT NULL)`),
    IDS_PER_STATEMENT,
  );
  for (const risk of toActiveRisks(rows, now)) {
    if (!needsAttention(risk.state)) continue;
    const counts = attention.get(risk.versionId) ?? { unacknowledgedSevere: 0, regressed: 0 };
    if (risk.state === "regressed") counts.regressed++;
    else if (SEVERE.has(risk.severity)) counts.unacknowledgedSevere++;
    attention.set(risk.versionId, counts);
  }
  return attention;
}
