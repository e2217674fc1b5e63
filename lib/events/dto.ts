import { z } from "zod";
import { isoTime } from "../core/iso-time";

/** What the browser and the API see of the ledger: no database code here (lib/events/ledger.ts writes it). */

/** Kinds about people, tokens and sign-ins: never about a thread. */
const ACCOUNT_KINDS = [
  "token_created",
  "token_revoked",
  "user_created",
  "user_role_changed",
  "user_disabled",
  "user_enabled",
  "user_password_set",
  "signed_in",
  "signed_out",
] as const;

/** Kinds about webhooks and integrations: never about a thread. */
const SETTINGS_KINDS = [
  "webhook_created",
  "webhook_changed",
  "webhook_deleted",
  "integration_created",
  "integration_deleted",
] as const;

/** Every kind of ledger event. The ledger is append-only (enforced by triggers). */
export const LEDGER_KINDS = [
  "packet_received",
  "packet_superseded",
  "packet_located",
  "packet_reports_attached",
  "thread_reopened",
  "thread_archived",
  "ingest_error",
  ...ACCOUNT_KINDS,
  "human_approved",
  "human_intervened",
  "human_answered",
  "human_answer_undone",
  "packet_written_back",
  "writeback_skipped",
  "risk_acknowledged",
  "risk_resolved",
  "risk_snoozed",
  "risk_untriaged",
  "risk_regressed",
  "session_started",
  "heartbeat",
  "session_ended",
  "thread_stale",
  "watchdog_duplicate_topic",
  "watchdog_commit_regressed",
  ...SETTINGS_KINDS,
  "code_host_pull_request",
  "code_host_ci",
  "code_host_review",
  "budget_crossed",
] as const;
export type LedgerKind = (typeof LEDGER_KINDS)[number];

/** Kinds never about a thread: people, tokens, sign-ins, webhooks, integrations, rejected packets. */
export const THREADLESS_KINDS: ReadonlySet<LedgerKind> = new Set<LedgerKind>([
  "ingest_error",
  ...ACCOUNT_KINDS,
  ...SETTINGS_KINDS,
]);

/**
 * The threads a batch of events names, once each; null when one event without a thread is of
 * a kind that is otherwise about threads (a view cannot tell what it changed: refetch it).
 */
export function threadsNamedBy(events: readonly { kind: LedgerKind; thread_key: string | null }[]): string[] | null {
  if (events.some((event) => event.thread_key === null && !THREADLESS_KINDS.has(event.kind))) return null;
  return [...new Set(events.flatMap((event) => (event.thread_key === null ? [] : [event.thread_key])))];
}

export const ledgerEventDto = z.object({
  seq: z.number().int(),
  at: isoTime,
  kind: z.enum(LEDGER_KINDS),
  thread_key: z.string().nullable(),
  packet_id: z.string().nullable(),
  actor: z.string(),
  data: z.record(z.string(), z.unknown()),
});
export type LedgerEventDto = z.infer<typeof ledgerEventDto>;

export function toLedgerEventDto(row: {
  seq: number;
  at: Date;
  kind: string;
  threadKey: string | null;
  versionId: string | null;
  actor: string;
  data: string;
}): LedgerEventDto {
  return ledgerEventDto.parse({
    seq: row.seq,
    at: row.at.toISOString(),
    kind: row.kind,
    thread_key: row.threadKey,
    packet_id: row.versionId,
    actor: row.actor,
    data: JSON.parse(row.data),
  });
}
