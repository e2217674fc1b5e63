import "server-only";
import { decideColumn } from "../columns";
import { config } from "../../server/config";
import { databaseDialect, inSqlTransaction, sqlExecutor, type SqlExecutor } from "../../db/client";
import { Prisma } from "../../generated/prisma/client";
import { optionalInstant } from "../../db/sql";
import { announceLedger } from "../../events/bus";
import { writeLedgerEvents } from "../../events/ledger";
import { SESSION_EVENT_KINDS, type SessionEventKind } from "../../views/threads/dto";

/**
 * Stale spells, each recorded once as a `thread_stale` event (docs/decisions/017-watchdog.md,
 * docs/product.md#stale-threads-and-the-watchdog).
 */

export interface StaleCandidate {
  id: string;
  key: string;
  activeVersionId: string;
  activeReceivedAt: Date;
  lastSessionKind: SessionEventKind | null;
  lastSessionAt: Date | null;
  staleNotifiedFor: Date | null;
  /** The latest approval or intervention on the active version. */
  decidedAt: Date | null;
}

export interface StaleSpell {
  threadKey: string;
  versionId: string;
  lastActivity: Date;
}

interface CandidateRow {
  id: string;
  key: string;
  activeVersionId: string;
  activeReceivedAt: string;
  lastSessionKind: string | null;
  lastSessionAt: string | null;
  staleNotifiedFor: string | null;
  decidedAt: string | null;
}

const DECISION_ACTIONS = Prisma.sql`('approved', 'intervened')`;
const asSessionKind = (kind: string | null) => (SESSION_EVENT_KINDS as readonly string[]).includes(kind ?? "") ? (kind as SessionEventKind) : null;

/** Active threads whose packet and session report are both older than the cutoff (the decision is judged after). */
async function readCandidates(cutoff: Date): Promise<StaleCandidate[]> {
  const sql = await sqlExecutor();
  const rows = await sql.query<CandidateRow>(
    Prisma.sql`SELECT t."id", t."key", t."activeVersionId", t."activeReceivedAt", t."lastSessionKind", t."lastSessionAt", t."staleNotifiedFor",
        (SELECT MAX(h."at") FROM "HumanRevision" h WHERE h."versionId" = t."activeVersionId" AND h."action" IN ${DECISION_ACTIONS}) AS "decidedAt"
      FROM "Thread" t
      WHERE t."archived" = FALSE AND t."activeVersionId" IS NOT NULL AND t."activeReceivedAt" < ${cutoff}
        AND (t."lastSessionAt" IS NULL OR t."lastSessionAt" < ${cutoff})`,
  );
  return rows.map((row) => ({
    id: row.id,
    key: row.key,
    activeVersionId: row.activeVersionId,
    activeReceivedAt: new Date(row.activeReceivedAt),
    lastSessionKind: asSessionKind(row.lastSessionKind),
    lastSessionAt: optionalInstant(row.lastSessionAt),
    staleNotifiedFor: optionalInstant(row.staleNotifiedFor),
    decidedAt: optionalInstant(row.decidedAt),
  }));
}

/** The spell a candidate is in now, or null when it is not stale (by the board's own rule) or already recorded. */
export function staleSpellOf(candidate: StaleCandidate, now: number, staleMs: number): StaleSpell | null {
  const { stale } = decideColumn({
    now,
    staleMs,
    activeReceivedAt: candidate.activeReceivedAt.getTime(),
    // Staleness depends on times only; the column itself is the board's business.
    flags: [],
    unacknowledgedSevere: 0,
    regressedRisks: 0,
    decision: candidate.decidedAt ? { kind: "approved", at: candidate.decidedAt.getTime() } : null,
    lastSession:
      candidate.lastSessionKind && candidate.lastSessionAt ? { kind: candidate.lastSessionKind, at: candidate.lastSessionAt.getTime() } : null,
  });
  if (!stale) return null;
  const lastActivity = new Date(
    Math.max(candidate.activeReceivedAt.getTime(), candidate.decidedAt?.getTime() ?? 0, candidate.lastSessionAt?.getTime() ?? 0),
  );
  if (candidate.staleNotifiedFor?.getTime() === lastActivity.getTime()) return null;
  return { threadKey: candidate.key, versionId: candidate.activeVersionId, lastActivity };
}

/**
 * Marks the spell recorded and appends its event, inside `tx`. The UPDATE is
 * conditional: on the spell not being recorded yet, and on nothing newer having
 * happened since the candidate was read. So two checks (in one process or two)
 * that saw the same spell record it once. Returns whether this one did.
 */
export async function recordStaleSpell(sql: SqlExecutor, candidate: StaleCandidate, spell: StaleSpell, now: Date, staleHours: number): Promise<boolean> {
  const updated = await sql.execute(
    Prisma.sql`UPDATE "Thread" SET "staleNotifiedFor" = ${spell.lastActivity}
      WHERE "id" = ${candidate.id} AND "archived" = FALSE AND "activeVersionId" = ${candidate.activeVersionId}
        AND "lastSessionAt" IS NOT DISTINCT FROM ${candidate.lastSessionAt}
        AND "staleNotifiedFor" IS DISTINCT FROM ${spell.lastActivity}
        AND NOT EXISTS (SELECT 1 FROM "HumanRevision" h WHERE h."versionId" = ${candidate.activeVersionId}
          AND h."action" IN ${DECISION_ACTIONS} AND h."at" > ${candidate.decidedAt ?? new Date(0)})`,
  );
  if (updated !== 1) return false;
  await writeLedgerEvents(sql, [staleEvent(spell, staleHours)], now);
  return true;
}

const staleEvent = (spell: StaleSpell, staleHours: number) => ({
  kind: "thread_stale" as const,
  threadKey: spell.threadKey,
  versionId: spell.versionId,
  actor: "watchdog",
  data: { last_activity: spell.lastActivity.toISOString(), stale_hours: staleHours },
});

/** On PostgreSQL, spells recorded together: one transaction, so one take of the writers' lock, per this many. */
export const SPELLS_PER_TRANSACTION = 50;

/**
 * recordStaleSpell for many spells in two statements (PostgreSQL): one UPDATE with the same
 * conditions, row by row, over the spells sent as one JSON parameter, then their events.
 * Returns the spells it recorded, in the order given.
 */
export async function recordStaleSpellsTogether(
  sql: SqlExecutor,
  found: readonly { candidate: StaleCandidate; spell: StaleSpell }[],
  now: Date,
  staleHours: number,
): Promise<StaleSpell[]> {
  const rows = found.map(({ candidate, spell }) => ({
    id: candidate.id,
    activeVersionId: candidate.activeVersionId,
    lastSessionAt: candidate.lastSessionAt?.toISOString() ?? null,
    lastActivity: spell.lastActivity.toISOString(),
    decidedAt: (candidate.decidedAt ?? new Date(0)).toISOString(),
  }));
  // A zone in the text of a TIMESTAMP (without zone) is ignored: the ISO times compare as the stored UTC times.
  const updated = await sql.query<{ id: string }>(
    Prisma.sql`UPDATE "Thread" AS t SET "staleNotifiedFor" = v."lastActivity"
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        AS v("id" TEXT, "activeVersionId" TEXT, "lastSessionAt" TIMESTAMP(3), "lastActivity" TIMESTAMP(3), "decidedAt" TIMESTAMP(3))
      WHERE t."id" = v."id" AND t."archived" = FALSE AND t."activeVersionId" = v."activeVersionId"
        AND t."lastSessionAt" IS NOT DISTINCT FROM v."lastSessionAt"
        AND t."staleNotifiedFor" IS DISTINCT FROM v."lastActivity"
        AND NOT EXISTS (SELECT 1 FROM "HumanRevision" h WHERE h."versionId" = v."activeVersionId"
          AND h."action" IN ${DECISION_ACTIONS} AND h."at" > v."decidedAt")
      RETURNING t."id"`,
  );
  const done = new Set(updated.map((row) => row.id));
  const recorded = found.filter(({ candidate }) => done.has(candidate.id)).map(({ spell }) => spell);
  if (recorded.length) await writeLedgerEvents(sql, recorded.map((spell) => staleEvent(spell, staleHours)), now);
  return recorded;
}

/** Records one `thread_stale` event for every stale spell not yet recorded; returns those it recorded. */
export async function checkStale(now: Date = new Date()): Promise<StaleSpell[]> {
  const staleHours = config().BATON_STALE_HOURS;
  const staleMs = staleHours * 3_600_000;
  const candidates = await readCandidates(new Date(now.getTime() - staleMs));
  const found = candidates.flatMap((candidate) => {
    const spell = staleSpellOf(candidate, now.getTime(), staleMs);
    return spell ? [{ candidate, spell }] : [];
  });
  const recorded: StaleSpell[] = [];
  // Raw statements on the adapter's transaction: the writers' turn for two statements, not Prisma's pipeline (issue 15).
  if (databaseDialect() === "postgresql") {
    // A fleet that went quiet together goes stale together: 200 spells one transaction each
    // held the writers' lock 200 times over 2.5 s, each with its round trips (decision 099).
    for (let at = 0; at < found.length; at += SPELLS_PER_TRANSACTION) {
      const group = found.slice(at, at + SPELLS_PER_TRANSACTION);
      recorded.push(...(await inSqlTransaction((sql) => recordStaleSpellsTogether(sql, group, now, staleHours))));
    }
  } else {
    // SQLite has no round trip to save: one transaction per spell, so a busy database delays one thread, not the whole check.
    for (const { candidate, spell } of found) if (await inSqlTransaction((sql) => recordStaleSpell(sql, candidate, spell, now, staleHours))) recorded.push(spell);
  }
  if (recorded.length) announceLedger();
  return recorded;
}
