import "server-only";
import type { Tx } from "../db/client";
import { sectionOf } from "../human/section";
import type { NewLedgerEvent } from "../events/ledger";
import type { Flag } from "../contract/lint";
import { HUMAN_ACTION_EVENTS, type NotificationEvent } from "./events";
import { eventData, type LedgerRow } from "./ledger-row";
import {
  criticalRisks,
  humanActionNotification,
  isHumanAction,
  questionsAsked,
  risksRegressed,
  verdictFailedNotification,
  type HumanActionKind,
  type NotificationBase,
} from "./messages";
import type { Notification, ThreadFacts } from "./payload";
import { findRegressions } from "./regressions";
import { readStepFacts, stepKey, type StepFacts } from "./step-facts";

/** The facts of a thread-wide event's notification (budget, staleness): the thread as it is now, and its active version unless the event names one. */
function threadEventBase(facts: StepFacts, row: LedgerRow, threadKey: string): NotificationBase {
  const thread = facts.threads.get(threadKey);
  return {
    threadKey,
    packetId: row.versionId ?? thread?.activeVersionId ?? null,
    ledgerSeq: row.seq,
    thread: { topic: thread?.topic ?? null, agent: thread?.agent ?? null, project: thread?.project ?? null, branch: thread?.branch ?? null },
  };
}

function deriveBudgetCrossed(facts: StepFacts, row: LedgerRow, out: Derivation): void {
  if (!row.threadKey) return;
  const base = threadEventBase(facts, row, row.threadKey);
  // The data of lib/views/usage/ingest-usage.ts: {project, period, period_start, amount, currency, spent}.
  const data = eventData(row.data);
  const money = (value: unknown) => `${typeof value === "number" ? value.toFixed(2) : "?"} ${typeof data.currency === "string" ? data.currency : ""}`.trim();
  out.notifications.push({
    at: row.at,
    notification: {
      event: "budget.crossed",
      ...base,
      summary: `${String(data.project)} spent ${money(data.spent)} this ${String(data.period)}, over its budget of ${money(data.amount)}`,
      detail: data,
      lines: [],
    },
  });
}

/**
 * What a ledger event means for people who are not watching: which
 * notifications it causes (docs/decisions/018-webhooks.md). Reads only, inside
 * the notifier's transaction; reading verdict files is left to the caller
 * (`verdictChecks`), outside any transaction.
 */

/** A version whose verdict reports must be read to know whether it failed. */
export interface VerdictCheck {
  /** Its packet's verdict is read as every view reads it (lib/views/verdict/version.ts). */
  base: NotificationBase;
}

export interface Derivation {
  /** Each with the time of the ledger event that caused it (a webhook created later is not told). */
  notifications: { notification: Notification; at: Date }[];
  /** risk_regressed events to append with the enqueued deliveries. */
  regressions: NewLedgerEvent[];
  verdictChecks: { check: VerdictCheck; at: Date }[];
}

/** The actor of events Baton records on its own. */
export const NOTIFIER_ACTOR = "baton";

export interface DeriveOptions {
  /** Events some enabled webhook subscribes to: others are not worked out (risk_regressed is recorded regardless). */
  wanted: ReadonlySet<NotificationEvent>;
  now: Date;
}

/** A packet event that may announce something: a late packet that arrived already superseded is history only. */
const announcesPacket = (row: LedgerRow) => row.kind === "packet_received" && row.versionId !== null && row.threadKey !== null && eventData(row.data).superseded_on_arrival !== true;

/** A person's action with the revision it stored. */
function humanActionOf(row: LedgerRow): { kind: HumanActionKind; versionId: string; revision: number } | null {
  if (!isHumanAction(row.kind) || !row.threadKey || !row.versionId) return null;
  const revision = eventData(row.data).revision;
  return typeof revision === "number" ? { kind: row.kind, versionId: row.versionId, revision } : null;
}

/**
 * Works out the notifications (and risk_regressed events) of `rows`, in order. What the rows
 * need is read for all of them at once (lib/notify/step-facts.ts), then each row is worked
 * out from those facts.
 */
export async function deriveNotifications(tx: Tx, rows: readonly LedgerRow[], options: DeriveOptions): Promise<Derivation> {
  const derivation: Derivation = { notifications: [], regressions: [], verdictChecks: [] };
  const { wanted } = options;
  // Without webhooks and without a resolved risk anywhere (a first walk through a long
  // ledger, say), a packet means nothing here: skip reading it.
  const packetsMatter =
    ["question.asked", "risk.critical", "verdict.failed", "risk.regressed"].some((event) => wanted.has(event as NotificationEvent)) ||
    (await tx.riskTriage.findFirst({ where: { state: "resolved" }, select: { threadId: true } })) !== null;
  const packets = packetsMatter ? rows.filter(announcesPacket) : [];
  const threadKeys = rows
    .filter((row) => (row.kind === "thread_stale" && wanted.has("thread.stale")) || (row.kind === "budget_crossed" && wanted.has("budget.crossed")))
    .flatMap((row) => (row.threadKey ? [row.threadKey] : []));
  const humanActions = rows.flatMap((row) => {
    const action = humanActionOf(row);
    return action && wanted.has(HUMAN_ACTION_EVENTS[action.kind]) ? [action] : [];
  });
  if (!packets.length && !threadKeys.length && !humanActions.length) return derivation;
  const facts = await readStepFacts(tx, { packets, threadKeys, humanActions, verdictPointers: wanted.has("verdict.failed") });

  const regressedInStep = new Set<string>();
  for (const row of rows) {
    if (row.kind === "packet_received" && packetsMatter) derivePacket(facts, row, options, derivation, regressedInStep);
    else if (row.kind === "thread_stale" && wanted.has("thread.stale")) deriveStale(facts, row, derivation);
    else if (row.kind === "budget_crossed" && wanted.has("budget.crossed")) deriveBudgetCrossed(facts, row, derivation);
    else if (isHumanAction(row.kind) && wanted.has(HUMAN_ACTION_EVENTS[row.kind])) deriveHumanAction(facts, row, derivation);
  }
  return derivation;
}

function derivePacket(facts: StepFacts, row: LedgerRow, options: DeriveOptions, out: Derivation, regressedInStep: Set<string>): void {
  if (!announcesPacket(row)) return;
  const version = facts.versions.get(row.versionId!);
  if (!version) return;
  const { wanted } = options;
  const previousId = facts.previousVersion.get(row.seq);
  const previous = previousId ? facts.versions.get(previousId) : undefined;
  const thread: ThreadFacts = { topic: version.topic, agent: version.agent, project: version.project, branch: version.branch };
  const base: NotificationBase = { threadKey: row.threadKey!, packetId: version.id, ledgerSeq: row.seq, thread };
  const announce = (notification: Notification | null) => {
    if (notification) out.notifications.push({ notification, at: row.at });
  };
  if (wanted.has("question.asked")) announce(questionsAsked(base, version.questions, previous?.questions ?? []));
  if (wanted.has("risk.critical")) announce(criticalRisks(base, version.risks, previous?.risks ?? []));

  if (wanted.has("verdict.failed")) {
    const flags = JSON.parse(version.flags) as Flag[];
    const failed = flags.find((flag) => flag.code === "verdict_failed");
    if (failed) announce(verdictFailedNotification(base, [failed.reason]));
    else if (facts.hasVerdictPointer.get(version.id)) out.verdictChecks.push({ check: { base }, at: row.at });
  }

  const regressed = findRegressions(row, version, facts, options.now, regressedInStep);
  for (const risk of regressed) {
    out.regressions.push({
      kind: "risk_regressed",
      threadKey: row.threadKey,
      versionId: version.id,
      actor: NOTIFIER_ACTOR,
      data: { fingerprint: risk.fingerprint, detail: risk.detail, severity: risk.severity },
    });
  }
  if (wanted.has("risk.regressed")) announce(risksRegressed(base, regressed));
}

function deriveStale(facts: StepFacts, row: LedgerRow, out: Derivation): void {
  if (!row.threadKey) return;
  const base = threadEventBase(facts, row, row.threadKey);
  // The watchdog's data (lib/board/watchdog/stale.ts): {last_activity, stale_hours}.
  const data = eventData(row.data);
  const since = typeof data.last_activity === "string" ? data.last_activity : null;
  const hours = typeof data.stale_hours === "number" ? `${data.stale_hours} hours` : "longer than the stale threshold";
  out.notifications.push({
    at: row.at,
    notification: {
      event: "thread.stale",
      ...base,
      summary: `No news from this thread for ${hours}${since ? ` (last activity ${since})` : ""}`,
      detail: data,
      lines: [],
    },
  });
}

/**
 * A person approved, intervened or answered (lib/human/actions.ts): every one
 * is announced, with the human section as that action left it (the revision
 * named by the event, not whatever came after).
 */
function deriveHumanAction(facts: StepFacts, row: LedgerRow, out: Derivation): void {
  const action = humanActionOf(row);
  if (!action) return;
  const version = facts.versions.get(action.versionId);
  const section = facts.humanSections.get(stepKey(action.versionId, action.revision));
  if (!version || section === undefined) return;
  const base: NotificationBase = {
    threadKey: row.threadKey!,
    packetId: action.versionId,
    ledgerSeq: row.seq,
    thread: { topic: version.topic, agent: version.agent, project: version.project, branch: version.branch },
  };
  out.notifications.push({ at: row.at, notification: humanActionNotification(action.kind, base, sectionOf([{ section }]), version.nextAction) });
}
