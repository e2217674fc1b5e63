import "server-only";
import { randomBytes } from "node:crypto";
import { config } from "../server/config";
import { database, inTransaction, type Tx } from "../db/client";
import { BatonError } from "../core/errors";
import { newId } from "../db/ids";
import { announceLedger } from "../events/bus";
import { appendLedgerEvents } from "../events/ledger";
import {
  deliveryDto,
  deliveryPageDto,
  webhookDto,
  type CreatedWebhookDto,
  type DeliveryPageDto,
  type DeliveryPageQuery,
  type NewWebhook,
  type WebhookChange,
  type WebhookDto,
} from "./dto";
import { NOTIFICATION_EVENTS, type NotificationEvent } from "./events";
import { resolveWithDns, webhookTargetProblem, type ResolveHost } from "./targets";

/** Admins' management of outgoing webhooks (docs/decisions/018-webhooks.md). */

export interface WebhookRow {
  id: string;
  name: string;
  url: string;
  secret: string;
  format: string;
  events: string;
  enabled: boolean;
  createdAt: Date;
  createdBy: string;
}

/** The stored comma-separated list, as known events (an unknown one, from a newer Baton, is ignored). */
export function subscribedEvents(row: Pick<WebhookRow, "events">): NotificationEvent[] {
  const stored = row.events.split(",");
  return NOTIFICATION_EVENTS.filter((event) => stored.includes(event));
}

export const secretHint = (secret: string) => `••••${secret.slice(-4)}`;

export function toWebhookDto(row: WebhookRow): WebhookDto {
  return webhookDto.parse({
    id: row.id,
    name: row.name,
    url: row.url,
    format: row.format,
    events: subscribedEvents(row),
    enabled: row.enabled,
    secret_hint: secretHint(row.secret),
    created_at: row.createdAt.toISOString(),
    created_by: row.createdBy,
  });
}

/**
 * Only scheme and host go into the ledger, which every viewer reads: the path
 * of a Slack incoming-webhook URL is itself a secret.
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}/…`;
  } catch {
    return "(invalid url)";
  }
}

/** What the ledger records of a webhook: never the secret, never the URL's path. */
function webhookEventData(row: WebhookRow): Record<string, unknown> {
  return {
    webhook_id: row.id,
    name: row.name,
    url: redactUrl(row.url),
    format: row.format,
    events: subscribedEvents(row),
    enabled: row.enabled,
  };
}

/** For tests: how a URL's host name is resolved when it is checked (real DNS by default). */
export interface TargetCheckOptions {
  resolveHost?: ResolveHost;
}

/**
 * Refuses a URL that points to loopback, private, link-local or other
 * non-public addresses unless BATON_WEBHOOK_ALLOWED_TARGETS lists it (lib/notify/targets.ts),
 * as the same 400 a bad field gets.
 */
async function checkTarget(url: string, what: string, options: TargetCheckOptions): Promise<void> {
  const problem = await webhookTargetProblem(url, config().BATON_WEBHOOK_ALLOWED_TARGETS, options.resolveHost ?? resolveWithDns);
  if (problem) throw new BatonError("invalid_request", `Bad ${what}: url: ${problem}.`, { fields: [{ field: "url", problem }] });
}

const generateSecret = () => `whsec_${randomBytes(32).toString("base64url")}`;

export async function listWebhooks(): Promise<WebhookDto[]> {
  const rows = await (await database()).webhook.findMany({ orderBy: { createdAt: "asc" } });
  return rows.map(toWebhookDto);
}

/**
 * Creates a webhook (`webhook` parsed with newWebhookSchema at the boundary); without a
 * secret, one is generated and returned (the only time it is shown).
 */
export async function createWebhook(actor: string, webhook: NewWebhook, options: TargetCheckOptions = {}): Promise<CreatedWebhookDto> {
  await checkTarget(webhook.url, "webhook", options);
  const generated = webhook.secret === undefined ? generateSecret() : null;
  const now = new Date();
  const row = await inTransaction(async (tx) => {
    const created = await tx.webhook.create({
      data: {
        id: newId("wh", now.getTime()),
        name: webhook.name,
        url: webhook.url,
        secret: webhook.secret ?? generated!,
        format: webhook.format,
        events: webhook.events.join(","),
        enabled: webhook.enabled,
        createdAt: now,
        createdBy: actor,
      },
    });
    await appendLedgerEvents(tx, [{ kind: "webhook_created", actor, data: webhookEventData(created) }], now);
    return created;
  });
  announceLedger();
  return { webhook: toWebhookDto(row), secret: generated };
}

async function findWebhook(tx: Tx, id: string): Promise<WebhookRow> {
  const row = await tx.webhook.findUnique({ where: { id } });
  if (!row) throw new BatonError("not_found", `No webhook has the id "${id}"; list them with GET /api/v1/webhooks.`);
  return row;
}

/**
 * Changes a webhook. Disabling it gives up its pending deliveries (marked
 * failed, so the log says why); a new secret signs every later attempt.
 */
export async function changeWebhook(actor: string, id: string, change: WebhookChange, options: TargetCheckOptions = {}): Promise<WebhookDto> {
  if (change.url !== undefined) await checkTarget(change.url, "webhook change", options);
  const now = new Date();
  const row = await inTransaction(async (tx) => {
    const before = await findWebhook(tx, id);
    const updated = await tx.webhook.update({
      where: { id },
      data: {
        ...(change.name === undefined ? {} : { name: change.name }),
        ...(change.url === undefined ? {} : { url: change.url }),
        ...(change.secret === undefined ? {} : { secret: change.secret }),
        ...(change.format === undefined ? {} : { format: change.format }),
        ...(change.events === undefined ? {} : { events: change.events.join(",") }),
        ...(change.enabled === undefined ? {} : { enabled: change.enabled }),
      },
    });
    const changed = (["name", "url", "format", "events", "enabled"] as const).filter((field) => String(before[field]) !== String(updated[field]));
    const secretRotated = change.secret !== undefined && change.secret !== before.secret;
    if (before.enabled && !updated.enabled) {
      await tx.webhookDelivery.updateMany({
        where: { webhookId: id, status: "pending" },
        data: { status: "failed", lastError: "not sent: the webhook was disabled", lockedUntil: null },
      });
    }
    if (changed.length || secretRotated) {
      await appendLedgerEvents(
        tx,
        [{ kind: "webhook_changed", actor, data: { ...webhookEventData(updated), changed: secretRotated ? [...changed, "secret"] : changed } }],
        now,
      );
    }
    return updated;
  });
  announceLedger();
  return toWebhookDto(row);
}

/** Deletes a webhook and its delivery log; a delivery being sent right now is not recorded. */
export async function deleteWebhook(actor: string, id: string): Promise<WebhookDto> {
  const now = new Date();
  const row = await inTransaction(async (tx) => {
    const existing = await findWebhook(tx, id);
    await tx.webhookDelivery.deleteMany({ where: { webhookId: id } });
    await tx.webhook.delete({ where: { id } });
    await appendLedgerEvents(tx, [{ kind: "webhook_deleted", actor, data: webhookEventData(existing) }], now);
    return existing;
  });
  announceLedger();
  return toWebhookDto(row);
}

/** A webhook's deliveries, newest first, `limit` at a time; `before` is the previous page's `next_before`. */
export async function listDeliveries(webhookId: string, page: DeliveryPageQuery): Promise<DeliveryPageDto> {
  const db = await database();
  if (!(await db.webhook.findUnique({ where: { id: webhookId }, select: { id: true } }))) {
    throw new BatonError("not_found", `No webhook has the id "${webhookId}"; list them with GET /api/v1/webhooks.`);
  }
  // Ids are time-sortable (lib/db/ids.ts): "older than the last one shown" is `id < before`.
  const rows = await db.webhookDelivery.findMany({
    where: { webhookId, ...(page.before ? { id: { lt: page.before } } : {}) },
    orderBy: { id: "desc" },
    take: page.limit + 1,
  });
  const shown = rows.slice(0, page.limit);
  return deliveryPageDto.parse({
    deliveries: shown.map((row) =>
      deliveryDto.parse({
        id: row.id,
        webhook_id: row.webhookId,
        event: row.event,
        thread_key: row.threadKey,
        status: row.status,
        attempts: row.attempts,
        last_status: row.lastStatus,
        last_error: row.lastError,
        created_at: row.createdAt.toISOString(),
        next_attempt_at: row.status === "pending" ? row.nextAttemptAt.toISOString() : null,
        delivered_at: row.deliveredAt?.toISOString() ?? null,
      }),
    ),
    next_before: rows.length > page.limit ? shown[shown.length - 1]!.id : null,
  });
}
