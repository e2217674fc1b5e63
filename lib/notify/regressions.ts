import "server-only";
import { SEVERITIES, type Severity } from "../contract/severity";
import { riskState, TRIAGE_ACTIONS, type StoredTriage } from "../views/risks/triage-state";
import type { LedgerRow } from "./ledger-row";
import { uniqueByFingerprint, type RiskRow } from "./messages";
import { stepKey, type StepFacts } from "./step-facts";

const asSeverity = (value: string): Severity => ((SEVERITIES as readonly string[]).includes(value) ? (value as Severity) : "medium");

/**
 * Risks of this version that riskState (the one rule) calls regressed, and
 * whose regression is not recorded yet: one risk_regressed per regression,
 * however many later versions still carry the risk.
 */
export function findRegressions(
  row: LedgerRow,
  version: { threadId: string; receivedAt: Date; risks: RiskRow[] },
  facts: Pick<StepFacts, "resolvedTriages" | "recordedRegressions">,
  now: Date,
  regressedInStep: Set<string>,
): RiskRow[] {
  const regressed: RiskRow[] = [];
  for (const risk of uniqueByFingerprint(version.risks)) {
    const triage = facts.resolvedTriages.get(stepKey(version.threadId, risk.fingerprint));
    if (!triage) continue;
    const stored: StoredTriage = {
      state: (TRIAGE_ACTIONS as readonly string[]).includes(triage.state) ? (triage.state as StoredTriage["state"]) : "resolved",
      snoozedUntil: triage.snoozedUntil,
      severityAtTriage: asSeverity(triage.severityAtTriage),
      updatedAt: triage.updatedAt,
    };
    if (riskState(stored, { severity: asSeverity(risk.severity), lastSeenAt: version.receivedAt }, now) !== "regressed") continue;
    const inStep = stepKey(row.threadKey!, risk.fingerprint);
    const recorded = facts.recordedRegressions.get(row.threadKey!) ?? [];
    const already =
      regressedInStep.has(inStep) || recorded.some((event) => event.at.getTime() > triage.updatedAt.getTime() && event.fingerprint === risk.fingerprint);
    if (already) continue;
    regressedInStep.add(inStep);
    regressed.push(risk);
  }
  return regressed;
}
