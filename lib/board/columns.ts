import { enumMembers } from "../core/enum-members";
import { NEEDS_PERSON_FLAGS, type FlagCode } from "../contract/lint";

/**
 * The one place that decides a card's column (docs/product.md#columns). Every rule
 * and its precedence is covered by columns.test.ts.
 */
export const COLUMN_TITLES = {
  running: "Running",
  needs_you: "Needs you",
  ready: "Ready",
  intervened: "Intervened",
  approved: "Approved",
  stale: "Stale",
} as const;
export type Column = keyof typeof COLUMN_TITLES;
/** The columns, in the order of COLUMN_TITLES. */
export const COLUMNS = enumMembers(COLUMN_TITLES);

export interface ColumnInput {
  now: number;
  staleMs: number;
  /** When the active packet arrived (Baton's clock). */
  activeReceivedAt: number;
  /** The active packet's flags (from ingest, and from reading its verdict reports). */
  flags: readonly FlagCode[];
  /** Critical and high risks of the active packet that are open: never triaged, or their snooze ended (lib/views/risks/triage-state.ts). */
  unacknowledgedSevere: number;
  /** Risks of the active packet, of any severity, that a person resolved and a newer packet carries again. */
  regressedRisks: number;
  /** A person's decision on the active packet, if any. */
  decision: { kind: "approved" | "intervened"; at: number } | null;
  /** The thread's latest session event, if any. */
  lastSession: { kind: "session_started" | "heartbeat" | "session_ended"; at: number } | null;
}

export interface ColumnDecision {
  column: Column;
  /** Why, in words, for the card's tooltip and the tests. */
  reason: string;
  /** Nothing new for longer than the stale threshold (drives the `stale` flag). */
  stale: boolean;
}

const hours = (ms: number) => `${Math.round(ms / 3_600_000)} h`;

/** Nothing new (a packet, a person's decision, a session report) for longer than the threshold. */
export function isStale(input: Pick<ColumnInput, "now" | "staleMs" | "activeReceivedAt" | "decision" | "lastSession">): boolean {
  const lastActivity = Math.max(input.activeReceivedAt, input.decision?.at ?? 0, input.lastSession?.at ?? 0);
  return input.now - lastActivity > input.staleMs;
}

/**
 * Rule 1 alone: a session that reported after the active packet, and recently, is at work on
 * it, whatever else the card holds. A session report's answer needs nothing more when it holds.
 */
export function sessionAtWork(input: Pick<ColumnInput, "now" | "staleMs" | "activeReceivedAt" | "lastSession">): ColumnDecision | null {
  const { now, staleMs, activeReceivedAt, lastSession } = input;
  if (lastSession && lastSession.kind !== "session_ended" && lastSession.at > activeReceivedAt && now - lastSession.at <= staleMs) {
    return { column: "running", reason: `a session reported ${lastSession.kind.replace("_", " ")} after the last packet`, stale: false };
  }
  return null;
}

export function decideColumn(input: ColumnInput): ColumnDecision {
  const { staleMs, decision } = input;
  const stale = isStale(input);

  // 1. A session that reported after the active packet, and recently, is at work on it.
  const atWork = sessionAtWork(input);
  if (atWork) return atWork;
  // 2. Without a decision, anything that needs a person puts the card in front of one; never stale.
  if (!decision) {
    const needs = input.flags.filter((flag) => NEEDS_PERSON_FLAGS.has(flag));
    const regressed = input.regressedRisks;
    if (needs.length || input.unacknowledgedSevere > 0 || regressed > 0) {
      const parts: string[] = [...needs];
      if (input.unacknowledgedSevere > 0) parts.push(`${input.unacknowledgedSevere} critical/high risk(s) not acknowledged`);
      if (regressed > 0) parts.push(`${regressed} resolved risk(s) came back`);
      return { column: "needs_you", reason: `needs a person: ${parts.join(", ")}`, stale };
    }
  }
  // 3. Everything else goes stale after the threshold without news.
  if (stale) return { column: "stale", reason: `nothing new for more than ${hours(staleMs)}`, stale };
  if (decision) return { column: decision.kind, reason: `a person ${decision.kind} the next action`, stale };
  return { column: "ready", reason: "a clean handoff waiting for a glance", stale };
}
