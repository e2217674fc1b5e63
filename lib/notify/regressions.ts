import "server-only";
import type { Tx } from "../db/client";
import { SEVERITIES, type Severity } from "../contract/severity";
import { riskState, TRIAGE_ACTIONS, type StoredTriage } from "../views/risks/triage-state";
import { inChunks } from "../db/sql";
import { eventData, type LedgerRow } from "./ledger-row";
import { uniqueByFingerprint, type RiskRow } from "./messages";

const asSeverity = (value: string): Severity => ((SEVERITIES as readonly string[]).includes(value) ? (value as Severity) : "medium");

/**
 * Risks of this version that riskState (the one rule) calls regressed, and
 * whose regression is not recorded yet: one risk_regressed per regression,
 * however many later versions still carry the risk.
 */
export async function findRegressions(
  tx: Tx,
  row: LedgerRow,
  version: { threadId: string; receivedAt: Date; risks: RiskRow[] },
  now: Date,
  regressedInStep: Set<string>,
): Promise<RiskRow[]> {
  const risks = uniqueByFingerprint(version.risks);
  if (!risks.length) return [];
  const triages = await inChunks(
    risks.map((risk) => risk.fingerprint),
    (fingerprints) => tx.riskTriage.findMany({ where: { threadId: version.threadId, state: "resolved", fingerprint: { in: fingerprints } } }),
  );
  if (!triages.length) return [];
  const recorded = await tx.ledgerEvent.findMany({
    where: { threadKey: row.threadKey, kind: "risk_regressed" },
    select: { at: true, data: true },
  });
  const byFingerprint = new Map(risks.map((risk) => [risk.fingerprint, risk]));
  const regressed: RiskRow[] = [];
  for (const triage of triages) {
    const risk = byFingerprint.get(triage.fingerprint)!;
    const stored: StoredTriage = {
      state: (TRIAGE_ACTIONS as readonly string[]).includes(triage.state) ? (triage.state as StoredTriage["state"]) : "resolved",
      snoozedUntil: triage.snoozedUntil,
      severityAtTriage: asSeverity(triage.severityAtTriage),
      updatedAt: triage.updatedAt,
    };
    if (riskState(stored, { severity: asSeverity(risk.severity), lastSeenAt: version.receivedAt }, now) !== "regressed") continue;
    const stepKey = `${row.threadKey}\u0000${risk.fingerprint}`;
    const already =
      regressedInStep.has(stepKey) ||
      recorded.some((event) => event.at.getTime() > triage.updatedAt.getTime() && eventData(event.data).fingerprint === risk.fingerprint);
    if (already) continue;
    regressedInStep.add(stepKey);
    regressed.push(risk);
  }
  return regressed;
}
