import type { HumanSection } from "../human/section";
import { threadHref } from "../views/threads/href";
import { NOTIFICATION_EVENT_INFO, type NotificationEvent, type WebhookFormat } from "./events";

/** Something to announce, derived from one ledger event (lib/notify/derive.ts), before it is addressed to a webhook. */
export interface Notification {
  event: NotificationEvent;
  threadKey: string;
  /** The packet version that caused it, when one did. */
  packetId: string | null;
  /** The ledger event it came from. */
  ledgerSeq: number;
  thread: ThreadFacts;
  /** One line for people. */
  summary: string;
  /** The event's particulars, as sent in the generic body. */
  detail: Record<string, unknown>;
  /** The particulars as lines of text (a Slack message lists them). */
  lines: string[];
  /**
   * A person's action (decision.approved, decision.intervened, question.answered):
   * the packet's human section right after it. The generic body then carries it
   * with `handoff_url`, the merged packet a runner hands to the next session.
   */
  human?: HumanSection;
}

export interface ThreadFacts {
  topic: string | null;
  agent: string | null;
  project: string | null;
  branch: string | null;
}

/** A delivery's own facts: the body is made once, when it is enqueued, and sent byte for byte on every attempt. */
export interface Envelope {
  deliveryId: string;
  createdAt: Date;
  /** BATON_PUBLIC_URL without a trailing slash. */
  publicUrl: string;
}

export const threadUrl = (publicUrl: string, threadKey: string) => `${publicUrl}${threadHref(threadKey)}`;

/** GET /api/v1/threads/{key}/handoff under BATON_PUBLIC_URL: the merged packet (a `packets:read` token reads it). */
export const handoffUrl = (publicUrl: string, threadKey: string) => `${publicUrl}/api/v1/threads/${encodeURIComponent(threadKey)}/handoff`;

/**
 * Generic JSON: `{id, event, created_at, thread: {key, url, …}, packet_id, summary, detail}`;
 * for a person's action also `human` (the section after it) and `handoff_url`.
 */
export function genericBody(notification: Notification, envelope: Envelope): Record<string, unknown> {
  const action = notification.human ? { human: notification.human, handoff_url: handoffUrl(envelope.publicUrl, notification.threadKey) } : {};
  return {
    id: envelope.deliveryId,
    event: notification.event,
    created_at: envelope.createdAt.toISOString(),
    ledger_seq: notification.ledgerSeq,
    thread: { key: notification.threadKey, url: threadUrl(envelope.publicUrl, notification.threadKey), ...notification.thread },
    packet_id: notification.packetId,
    summary: notification.summary,
    detail: notification.detail,
    ...action,
  };
}

/** Slack's mrkdwn: &, < and > are the only characters to escape (a "<" would start a link). */
export function escapeSlack(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

// Slack refuses a section text over 3,000 characters.
const SLACK_TEXT_MAX = 2900;
const SLACK_LINES_MAX = 10;
// Ten lines of this (escaped, a little longer) stay within one section.
const SLACK_LINE_MAX = 250;
const clip = (text: string, max = SLACK_TEXT_MAX) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** Slack-compatible (incoming webhooks, and chat tools that accept their format): `{text, blocks}` with a link to the thread. */
export function slackBody(notification: Notification, envelope: Envelope): Record<string, unknown> {
  const { title } = NOTIFICATION_EVENT_INFO[notification.event];
  const url = threadUrl(envelope.publicUrl, notification.threadKey);
  const key = escapeSlack(notification.threadKey).replace(/\|/g, "¦");
  const lines = notification.lines.slice(0, SLACK_LINES_MAX).map((line) => `• ${escapeSlack(clip(line, SLACK_LINE_MAX))}`);
  if (notification.lines.length > SLACK_LINES_MAX) lines.push(`• …and ${notification.lines.length - SLACK_LINES_MAX} more`);
  const context = [notification.thread.agent, notification.thread.project, notification.thread.branch].filter(Boolean).join(" · ");
  return {
    text: escapeSlack(clip(`${title}: ${notification.summary} (${notification.threadKey})`)),
    blocks: [
      { type: "section", text: { type: "mrkdwn", text: clip(`*${title}* · <${url}|${key}>\n${escapeSlack(notification.summary)}`) } },
      ...(lines.length ? [{ type: "section", text: { type: "mrkdwn", text: clip(lines.join("\n")) } }] : []),
      { type: "context", elements: [{ type: "mrkdwn", text: clip(escapeSlack(context ? `Baton · ${context}` : "Baton"), 300) }] },
    ],
  };
}

/** The exact text that is sent (and signed) for `notification` in `format`. */
export function renderBody(format: WebhookFormat, notification: Notification, envelope: Envelope): string {
  return JSON.stringify(format === "slack" ? slackBody(notification, envelope) : genericBody(notification, envelope));
}
