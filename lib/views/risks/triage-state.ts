import { z } from "zod";
import { severityRank, type Severity } from "../../contract/severity";

/**
 * THE rules of a risk's triage state (docs/product.md#risks), in one place: the
 * risks view, the board (what counts as unacknowledged) and the notifier
 * (risk regressed) all ask here. Client-safe.
 */
export const TRIAGE_ACTIONS = ["acknowledged", "resolved", "snoozed"] as const;
export type TriageAction = (typeof TRIAGE_ACTIONS)[number];
export const triageActionSchema = z.enum(TRIAGE_ACTIONS);

/** What a person sees for a risk now. */
export const RISK_STATES = ["open", "acknowledged", "resolved", "snoozed", "regressed"] as const;
export type RiskState = (typeof RISK_STATES)[number];

export interface StoredTriage {
  state: TriageAction;
  /** Snoozed until then; null while snoozed = until the severity rises. */
  snoozedUntil: Date | null;
  severityAtTriage: Severity;
  updatedAt: Date;
}

export interface RiskSighting {
  /** The risk's severity in the newest version of the thread that carries it. */
  severity: Severity;
  /** When that newest version arrived. */
  lastSeenAt: Date;
}

/**
 * The state of a risk in one thread, from its stored triage and its latest sighting:
 * - a resolved risk seen again in a version that arrived after it was resolved is regressed;
 * - a snooze ends at its date, or (without one) when the severity rises above the one snoozed;
 * - anything else keeps its triage, or is open.
 */
export function riskState(triage: StoredTriage | null, sighting: RiskSighting, now: Date): RiskState {
  if (!triage) return "open";
  switch (triage.state) {
    case "resolved":
      return sighting.lastSeenAt.getTime() > triage.updatedAt.getTime() ? "regressed" : "resolved";
    case "snoozed": {
      const expired = triage.snoozedUntil ? now.getTime() >= triage.snoozedUntil.getTime() : severityRank(sighting.severity) > severityRank(triage.severityAtTriage);
      return expired ? "open" : "snoozed";
    }
    case "acknowledged":
      return "acknowledged";
  }
}

/** Which states still need a person: open and regressed (the board's "unacknowledged"). */
export function needsAttention(state: RiskState): boolean {
  return state === "open" || state === "regressed";
}

const ALREADY: Record<TriageAction, string> = { acknowledged: "acknowledged", resolved: "resolved", snoozed: "snoozed" };

/**
 * Why an action does not apply to these risks (each given by the states of its threads),
 * or null when it does: nothing to act on, or every one of them is already in that state.
 */
export function triageBlocker(action: TriageAction, risks: readonly { states: readonly RiskState[] }[]): string | null {
  if (!risks.length) return "No risk is selected or current.";
  if (!risks.every((risk) => risk.states.length > 0 && risk.states.every((state) => state === action))) return null;
  return risks.length === 1 ? `It is already ${ALREADY[action]}.` : `All ${risks.length} are already ${ALREADY[action]}.`;
}
