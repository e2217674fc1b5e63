import "server-only";
import type { Tx } from "../db";
import { sameQuestionKey, sectionOf, type HumanSection } from "../human/section";
import type { NewLedgerEvent } from "../ledger/events";
import type { CanonicalPacket } from "../packet/canonical";
import type { Flag } from "../packet/lint";
import { SEVERITIES, type Severity } from "../packet/severity";
import { riskState, TRIAGE_ACTIONS, type StoredTriage } from "../risks/triage-state";
import { HUMAN_ACTION_EVENTS, type NotificationEvent } from "./events";
import type { Notification, ThreadFacts } from "./payload";
import { inChunks } from "../sql";

/**
 * What a ledger event means for people who are not watching: which
 * notifications it causes (docs/decisions/018-webhooks.md). Reads only, inside
 * the notifier's transaction; reading verdict files is left to the caller
 * (`verdictChecks`), outside any transaction.
 */

export interface LedgerRow {
  seq: number;
  at: Date;
  kind: string;
  threadKey: string | null;
  versionId: string | null;
  data: string;
}

/** A version whose verdict reports must be read to know whether it failed. */
export interface VerdictCheck {
  base: NotificationBase;
  pointers: NonNullable<CanonicalPacket["verdict_pointer"]>;
  inlineVerdict: CanonicalPacket["verdict"];
  workspaceRoot: string | null;
  project: string | null;
}

export interface Derivation {
  /** Each with the time of the ledger event that caused it (a webhook created later is not told). */
  notifications: { notification: Notification; at: Date }[];
  /** risk_regressed events to append with the enqueued deliveries. */
  regressions: NewLedgerEvent[];
  verdictChecks: { check: VerdictCheck; at: Date }[];
}

export type NotificationBase = Omit<Notification, "event" | "summary" | "detail" | "lines">;

/** The actor of events Baton records on its own. */
export const NOTIFIER_ACTOR = "baton";

const QUOTE_MAX = 200;
const quote = (text: string) => (text.length > QUOTE_MAX ? `${text.slice(0, QUOTE_MAX - 1)}…` : text);
const andMore = (count: number) => (count > 1 ? ` (and ${count - 1} more)` : "");


function parseData(row: LedgerRow): Record<string, unknown> {
  try {
    const data: unknown = JSON.parse(row.data);
    return data && typeof data === "object" ? (data as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

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
  return parseData({ ...row, data: next.data }).superseded_by === row.versionId ? next.versionId : null;
}

const versionSelect = {
  id: true,
  threadId: true,
  receivedAt: true,
  flags: true,
  workspaceRoot: true,
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
    else if (isHumanAction(row.kind) && options.wanted.has(HUMAN_ACTION_EVENTS[row.kind])) await deriveHumanAction(tx, row, row.kind, derivation);
  }
  return derivation;
}

type HumanActionKind = keyof typeof HUMAN_ACTION_EVENTS;
const isHumanAction = (kind: string): kind is HumanActionKind => Object.hasOwn(HUMAN_ACTION_EVENTS, kind);

async function derivePacket(tx: Tx, row: LedgerRow, options: DeriveOptions, out: Derivation, regressedInStep: Set<string>): Promise<void> {
  // A late packet that arrived already superseded is history only: it announces nothing.
  if (!row.versionId || !row.threadKey || parseData(row).superseded_on_arrival === true) return;
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
          check: { base, pointers: canonical.verdict_pointer, inlineVerdict: canonical.verdict, workspaceRoot: version.workspaceRoot, project: version.project },
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

type QuestionRow = { questionId: string; question: string; blocking: boolean; options: string };

/** Questions the previous active version did not ask. */
export function questionsAsked(base: NotificationBase, questions: QuestionRow[], previous: { question: string }[]): Notification | null {
  // The same question differs at most in case, spacing or Unicode form: the inbox's rule.
  const asked = new Set(previous.map((question) => sameQuestionKey(question.question)));
  const fresh = questions.filter((question) => !asked.has(sameQuestionKey(question.question)));
  if (!fresh.length) return null;
  return {
    ...base,
    event: "question.asked",
    summary: `${base.thread.agent ?? "The agent"} asks: ${quote(fresh[0]!.question)}${andMore(fresh.length)}`,
    detail: {
      questions: fresh.map((question) => ({
        id: question.questionId,
        question: question.question,
        blocking: question.blocking,
        options: JSON.parse(question.options) as string[],
      })),
    },
    lines: fresh.map((question) => `${question.blocking ? "[blocking] " : ""}${question.question}`),
  };
}

/** Critical risks new to the thread's critical list: one that was there, less severe, counts too. */
export function criticalRisks(base: NotificationBase, risks: RiskRow[], previous: { fingerprint: string; severity: string }[]): Notification | null {
  const known = new Set(previous.filter((risk) => risk.severity === "critical").map((risk) => risk.fingerprint));
  const fresh = uniqueBy(risks.filter((risk) => risk.severity === "critical" && !known.has(risk.fingerprint)));
  if (!fresh.length) return null;
  return {
    ...base,
    event: "risk.critical",
    summary: `New critical risk: ${quote(fresh[0]!.detail)}${andMore(fresh.length)}`,
    detail: { risks: fresh.map((risk) => ({ id: risk.riskId, fingerprint: risk.fingerprint, detail: risk.detail, mitigation: risk.mitigation })) },
    lines: fresh.map((risk) => risk.detail),
  };
}

function risksRegressed(base: NotificationBase, regressed: RiskRow[]): Notification | null {
  if (!regressed.length) return null;
  return {
    ...base,
    event: "risk.regressed",
    summary: `A resolved risk is back: ${quote(regressed[0]!.detail)}${andMore(regressed.length)}`,
    detail: { risks: regressed.map((risk) => ({ id: risk.riskId, fingerprint: risk.fingerprint, severity: risk.severity, detail: risk.detail })) },
    lines: regressed.map((risk) => `${risk.severity}: ${risk.detail}`),
  };
}

export function verdictFailedNotification(base: NotificationBase, reasons: string[]): Notification {
  return {
    ...base,
    event: "verdict.failed",
    summary: `The verdict failed: ${quote(reasons.join("; ") || "see the thread")}`,
    detail: { reasons },
    lines: reasons,
  };
}

function uniqueBy<T extends { fingerprint: string }>(risks: T[]): T[] {
  const seen = new Set<string>();
  return risks.filter((risk) => !seen.has(risk.fingerprint) && seen.add(risk.fingerprint));
}

const asSeverity = (value: string): Severity => ((SEVERITIES as readonly string[]).includes(value) ? (value as Severity) : "medium");

interface RiskRow {
  riskId: string;
  severity: string;
  detail: string;
  mitigation: string | null;
  fingerprint: string;
}

/**
 * Risks of this version that riskState (the one rule) calls regressed, and
 * whose regression is not recorded yet: one risk_regressed per regression,
 * however many later versions still carry the risk.
 */
async function findRegressions(
  tx: Tx,
  row: LedgerRow,
  version: { threadId: string; receivedAt: Date; risks: RiskRow[] },
  now: Date,
  regressedInStep: Set<string>,
): Promise<RiskRow[]> {
  const risks = uniqueBy(version.risks);
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
      recorded.some((event) => event.at.getTime() > triage.updatedAt.getTime() && parseData({ ...row, data: event.data }).fingerprint === risk.fingerprint);
    if (already) continue;
    regressedInStep.add(stepKey);
    regressed.push(risk);
  }
  return regressed;
}

async function deriveStale(tx: Tx, row: LedgerRow, out: Derivation): Promise<void> {
  if (!row.threadKey) return;
  const thread = await tx.thread.findUnique({
    where: { key: row.threadKey },
    select: { topic: true, agent: true, project: true, branch: true, activeVersionId: true },
  });
  // The watchdog's data (lib/watchdog/stale.ts): {last_activity, stale_hours}.
  const data = parseData(row);
  const since = typeof data.last_activity === "string" ? data.last_activity : null;
  const hours = typeof data.stale_hours === "number" ? `${data.stale_hours} hours` : "longer than the stale threshold";
  out.notifications.push({
    at: row.at,
    notification: {
      event: "thread.stale",
      threadKey: row.threadKey,
      packetId: row.versionId ?? thread?.activeVersionId ?? null,
      ledgerSeq: row.seq,
      thread: { topic: thread?.topic ?? null, agent: thread?.agent ?? null, project: thread?.project ?? null, branch: thread?.branch ?? null },
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
  const revision = parseData(row).revision;
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

/** The message of a person's action, from the section it produced. */
export function humanActionNotification(kind: HumanActionKind, base: NotificationBase, human: HumanSection, nextAction: string | null): Notification {
  const event = HUMAN_ACTION_EVENTS[kind];
  const common = { ...base, event, human };
  const decision = human.decision;
  if (kind === "human_answered") {
    // This revision's answers: the ones stamped with its time.
    const answers = human.answers.filter((entry) => entry.at === human.updated_at);
    const by = answers[0]?.by ?? "A person";
    return {
      ...common,
      summary: `${by} answered: ${quote(answers[0]?.question ?? "a question")}${andMore(answers.length)}`,
      detail: { revision: human.revision, answers: answers.map(({ question_id, question, answer }) => ({ question_id, question, answer })) },
      lines: answers.map((entry) => `${entry.question} → ${entry.answer}`),
    };
  }
  if (kind === "human_intervened") {
    const question = human.questions.at(-1);
    return {
      ...common,
      summary: `${decision?.by ?? "A person"} intervened: ${quote(question?.text ?? "see the thread")}`,
      detail: { revision: human.revision, decision, question: question ?? null },
      lines: question ? [`${question.blocking ? "[blocking] " : ""}${question.text}`] : [],
    };
  }
  return {
    ...common,
    summary: `${decision?.by ?? "A person"} approved: ${quote(nextAction ?? "the next action")}`,
    detail: { revision: human.revision, decision, next_action: nextAction },
    lines: decision?.note ? [`Note: ${decision.note}`] : [],
  };
}
