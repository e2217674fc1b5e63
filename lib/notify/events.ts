import { z } from "zod";

/**
 * The notification events a webhook can subscribe to, in one place; client-safe. Which are
 * rate-limited, and why people's actions are not: docs/decisions/018-webhooks.md.
 */
export const NOTIFICATION_EVENTS = [
  "question.asked",
  "risk.critical",
  "verdict.failed",
  "thread.stale",
  "risk.regressed",
  "decision.approved",
  "decision.intervened",
  "question.answered",
  "budget.crossed",
] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];
export const notificationEventSchema = z.enum(NOTIFICATION_EVENTS, {
  error: `events must be some of ${NOTIFICATION_EVENTS.join(", ")}`,
});

export interface NotificationEventInfo {
  /** What the admin form calls it. */
  label: string;
  /** The heading of its messages. */
  title: string;
  rateLimited: boolean;
}

export const NOTIFICATION_EVENT_INFO: Record<NotificationEvent, NotificationEventInfo> = {
  "question.asked": { label: "An agent asks a new question", title: "New question", rateLimited: true },
  "risk.critical": { label: "A new critical risk", title: "New critical risk", rateLimited: true },
  "verdict.failed": { label: "A verdict failed", title: "Verdict failed", rateLimited: true },
  "thread.stale": { label: "A thread went stale", title: "Thread stale", rateLimited: true },
  "risk.regressed": { label: "A resolved risk came back", title: "Risk regressed", rateLimited: true },
  "decision.approved": { label: "A person approves a next action", title: "Approved", rateLimited: false },
  "decision.intervened": { label: "A person intervenes", title: "Intervened", rateLimited: false },
  "question.answered": { label: "A person answers an agent's questions", title: "Answered", rateLimited: false },
  // Once per budget per period already (lib/views/usage/ingest-usage.ts).
  "budget.crossed": { label: "A project's spending crosses its budget", title: "Budget crossed", rateLimited: false },
};

/** The ledger events of people's actions, and the notification each one is. */
export const HUMAN_ACTION_EVENTS = {
  human_approved: "decision.approved",
  human_intervened: "decision.intervened",
  human_answered: "question.answered",
} as const satisfies Record<string, NotificationEvent>;

/** At most one message per (webhook, event, thread) in this window (docs/product.md#webhooks). */
export const RATE_LIMIT_WINDOW_MS = 10 * 60 * 1000;

export const WEBHOOK_FORMATS = ["generic", "slack"] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];
export const webhookFormatSchema = z.enum(WEBHOOK_FORMATS, { error: "format must be generic or slack" });

/** pending → delivered | failed; suppressed rows were rate-limited and are never sent. */
export const DELIVERY_STATUSES = ["pending", "delivered", "failed", "suppressed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
