import "server-only";
import type { Tx } from "../db/client";
import { sectionOf } from "../human/section";
import type { NewLedgerEvent } from "../events/ledger";
import type { CanonicalPacket } from "../contract/canonical";
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

/** The facts of a thread-wide event's notification (budget, staleness): the thread as it is now, and its active version unless the event names one. */
async function threadEventBase(tx: Tx, row: LedgerRow, threadKey: string): Promise<NotificationBase> {
  const thread = await tx.thread.findUnique({
    where: { key: threadKey },
    select: { topic: true, agent: true, project: true, branch: true, activeVersionId: true },
  });
  return {
    threadKey,
    packetId: row.versionId ?? thread?.activeVersionId ?? null,
    ledgerSeq: row.seq,
    thread: { topic: thread?.topic ?? null, agent: thread?.agent ?? null, project: thread?.project ?? null, branch: thread?.branch ?? null },
  };
}

async function deriveBudgetCrossed(tx: Tx, row: LedgerRow, out: Derivation): Promise<void> {
  if (!row.threadKey) return;
  const base = await threadEventBase(tx, row, row.threadKey);
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

/**
 * The version that was active when this one arrived: store-batch records
 * `packet_superseded` (on the old version, `superseded_by` the new one) right
 * after the new version's `packet_received`.
 */
async function previousActiveVersion(tx: Tx, row: LedgerRow): Promise<string | null> {
  const next = await tx.ledgerEvent.findFirst({
    where: { threadKey: row.threadKey, kind: "packet_superseded", seq: { gt: row.seq } },
    orderBy: { seq: "asc" },
    select: { versionId: true, data: true },
  });
  if (!next) return null;
  return eventData(next.data).superseded_by === row.versionId ? next.versionId : null;
}

const versionSelect = {
  id: true,
  threadId: true,
  receivedAt: true,
  flags: true,
  project: true,
  agent: true,
  topic: true,
  branch: true,
  risks: { select: { riskId: true, severity: true, detail: true, mitigation: true, fingerprint: true }, orderBy: { position: "asc" } },
  questions: { select: { questionId: true, question: true, blocking: true, options: true }, orderBy: { position: "asc" } },
} as const;

export interface DeriveOptions {
  /** Events some enabled webhook subscribes to: others are not worked out (risk_regressed is recorded regardless). */
  wanted: ReadonlySet<NotificationEvent>;
  now: Date;
}

/** Works out the notifications (and risk_regressed events) of `rows`, in order. */
export async function deriveNotifications(tx: Tx, rows: readonly LedgerRow[], options: DeriveOptions): Promise<Derivation> {
  const derivation: Derivation = { notifications: [], regressions: [], verdictChecks: [] };
  const regressedInStep = new Set<string>();
  // Without webhooks and without a resolved risk anywhere (a first walk through a long
  // ledger, say), a packet means nothing here: skip reading it.
  const packetsMatter =
    ["question.asked", "risk.critical", "verdict.failed", "risk.regressed"].some((event) => options.wanted.has(event as NotificationEvent)) ||
    (await tx.riskTriage.findFirst({ where: { state: "resolved" }, select: { threadId: true } })) !== null;
  for (const row of rows) {
    if (row.kind === "packet_received" && packetsMatter) await derivePacket(tx, row, options, derivation, regressedInStep);
    else if (row.kind === "thread_stale" && options.wanted.has("thread.stale")) await deriveStale(tx, row, derivation);
    else if (row.kind === "budget_crossed" && options.wanted.has("budget.crossed")) await deriveBudgetCrossed(tx, row, derivation);
    else if (isHumanAction(row.kind) && options.wanted.has(HUMAN_ACTION_EVENTS[row.kind])) await deriveHumanAction(tx, row, row.kind, derivation);
  }
  return derivation;
}

async function derivePacket(tx: Tx, row: LedgerRow, options: DeriveOptions, out: Derivation, regressedInStep: Set<string>): Promise<void> {
  // A late packet that arrived already superseded is history only: it announces nothing.
  if (!row.versionId || !row.threadKey || eventData(row.data).superseded_on_arrival === true) return;
  const version = await tx.packetVersion.findUnique({ where: { id: row.versionId }, select: versionSelect });
  if (!version) return;
  const { wanted } = options;
  const previousId = await previousActiveVersion(tx, row);
  const previous = previousId
    ? await tx.packetVersion.findUnique({
        where: { id: previousId },
        select: { risks: { select: { fingerprint: true, severity: true } }, questions: { select: { question: true } } },
      })
    : null;
  const thread: ThreadFacts = { topic: version.topic, agent: version.agent, project: version.project, branch: version.branch };
  const base: NotificationBase = { threadKey: row.threadKey, packetId: version.id, ledgerSeq: row.seq, thread };
  const announce = (notification: Notification | null) => {
    if (notification) out.notifications.push({ notification, at: row.at });
  };
  if (wanted.has("question.asked")) announce(questionsAsked(base, version.questions, previous?.questions ?? []));
  if (wanted.has("risk.critical")) announce(criticalRisks(base, version.risks, previous?.risks ?? []));

  if (wanted.has("verdict.failed")) {
    const flags = JSON.parse(version.flags) as Flag[];
    const failed = flags.find((flag) => flag.code === "verdict_failed");
    if (failed) {
      announce(verdictFailedNotification(base, [failed.reason]));
    } else {
      const { canonicalJson } = await tx.packetVersion.findUniqueOrThrow({ where: { id: version.id }, select: { canonicalJson: true } });
      const canonical = JSON.parse(canonicalJson) as CanonicalPacket;
      if (canonical.verdict_pointer?.length) {
        out.verdictChecks.push({
          check: { base },
          at: row.at,
        });
      }
    }
  }

  const regressed = await findRegressions(tx, row, version, options.now, regressedInStep);
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

async function deriveStale(tx: Tx, row: LedgerRow, out: Derivation): Promise<void> {
  if (!row.threadKey) return;
  const base = await threadEventBase(tx, row, row.threadKey);
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
async function deriveHumanAction(tx: Tx, row: LedgerRow, kind: HumanActionKind, out: Derivation): Promise<void> {
  const revision = eventData(row.data).revision;
  if (!row.threadKey || !row.versionId || typeof revision !== "number") return;
  const version = await tx.packetVersion.findUnique({
    where: { id: row.versionId },
    select: { topic: true, agent: true, project: true, branch: true, nextAction: true, humanRevisions: { where: { revision }, select: { section: true } } },
  });
  if (!version?.humanRevisions.length) return;
  const base: NotificationBase = {
    threadKey: row.threadKey,
    packetId: row.versionId,
    ledgerSeq: row.seq,
    thread: { topic: version.topic, agent: version.agent, project: version.project, branch: version.branch },
  };
  out.notifications.push({ at: row.at, notification: humanActionNotification(kind, base, sectionOf(version.humanRevisions), version.nextAction) });
}
