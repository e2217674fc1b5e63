import "server-only";
import { request as httpRequest, type IncomingMessage, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import ipaddr from "ipaddr.js";
import { config } from "../server/config";
import { inSqlTransaction, inTransaction, sqlExecutor } from "../db/client";
import { Prisma } from "../generated/prisma/client";
import { inChunks } from "../db/sql";
import { startPollingLoop, type PollingLoop } from "./loop";
import { DELIVERY_HEADER, EVENT_HEADER, SIGNATURE_HEADER, signBody } from "./signature";
import { addressProblem, guardedLookup, normaliseHost, RefusedTargetError, resolveWithDns, type ResolveHost, type WebhookAllowList } from "./targets";

/**
 * The delivery worker: claims due deliveries with a conditional update, sends them, retries
 * with growing jittered waits (docs/decisions/018-webhooks.md, 6).
 */

/** The waits before the 2nd, 3rd… attempt: 8 attempts over about 3 hours. */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [10_000, 30_000, 90_000, 300_000, 900_000, 2_700_000, 7_200_000];
export const DELIVERY_BATCH = 10;
export const DELIVERY_INTERVAL_MS = 1_000;
/** ±20% on every wait, so receivers that come back are not hit by every retry at once. */
export const RETRY_JITTER = 0.2;

export interface DeliveryWorkerOptions {
  /** How often due deliveries are looked for (the notifier also wakes the worker). */
  intervalMs?: number;
  /** Waits between attempts; attempts in all = its length + 1. */
  retryDelaysMs?: readonly number[];
  /** 0 to 1: how much each wait varies. */
  jitter?: number;
  /** Per attempt; default BATON_WEBHOOK_TIMEOUT_MS. */
  timeoutMs?: number;
  batchSize?: number;
  /** For tests: how target host names are resolved (real DNS by default). */
  resolveHost?: ResolveHost;
}

/** Where a delivery may connect: default BATON_WEBHOOK_ALLOWED_TARGETS and real DNS. */
export interface TargetOptions {
  allow?: WebhookAllowList;
  resolveHost?: ResolveHost;
}

interface Claimed {
  id: string;
  event: string;
  body: string;
  attempts: number;
  lease: Date;
  webhook: { id: string; name: string; url: string; secret: string; enabled: boolean } | null;
}

interface Outcome {
  delivered: boolean;
  status: number | null;
  error: string | null;
}

/** A delivery to send now: pending, its time come, and not claimed (or its claim expired). The one spelling of "due". */
const dueSql = (now: Date) => Prisma.sql`"status" = 'pending' AND "nextAttemptAt" <= ${now} AND ("lockedUntil" IS NULL OR "lockedUntil" < ${now})`;

/** Claims up to `limit` due deliveries until `lease`. */
async function claimDue(limit: number, now: Date, lease: Date): Promise<Claimed[]> {
  return inTransaction(async (tx) => {
    // Raw statements: Prisma compiled the same claim again for every delivery.
    const sql = await sqlExecutor(tx);
    const candidates = await sql.query<{ id: string }>(
      Prisma.sql`SELECT "id" FROM "WebhookDelivery" WHERE ${dueSql(now)} ORDER BY "nextAttemptAt" ASC LIMIT ${limit}`,
    );
    const won: string[] = [];
    for (const { id } of candidates) {
      // Claimed only if still due: another instance may have claimed it since the read.
      const claimed = await sql.execute(Prisma.sql`UPDATE "WebhookDelivery" SET "lockedUntil" = ${lease} WHERE "id" = ${id} AND ${dueSql(now)}`);
      if (claimed === 1) won.push(id);
    }
    // The claimed rows and their webhooks in two reads for the batch, not two per delivery.
    const rows = await inChunks(won, (ids) =>
      tx.webhookDelivery.findMany({ where: { id: { in: ids } }, select: { id: true, event: true, body: true, attempts: true, webhookId: true } }),
    );
    const webhookIds = [...new Set(rows.map((row) => row.webhookId))];
    const webhooks = new Map(
      (await inChunks(webhookIds, (ids) => tx.webhook.findMany({ where: { id: { in: ids } }, select: { id: true, name: true, url: true, secret: true, enabled: true } }))).map(
        (webhook) => [webhook.id, webhook],
      ),
    );
    return rows.map((row) => ({ id: row.id, event: row.event, body: row.body, attempts: row.attempts, lease, webhook: webhooks.get(row.webhookId) ?? null }));
  });
}


/** Why a request got no answer, in words for the log: never the URL (a Slack URL's path is a secret). */
function describeFailure(error: unknown, timeoutMs: number): string {
  if (error instanceof RefusedTargetError) return error.message;
  const record = error as { name?: string; code?: string; cause?: { code?: string; name?: string } } | null;
  if (record?.name === "TimeoutError" || record?.cause?.name === "TimeoutError") return `no answer within ${timeoutMs} ms`;
  const code = record?.cause?.code ?? (record?.name === "AbortError" ? undefined : record?.code);
  if (code) return `could not connect (${code})`;
  // Never the error's own message: it can quote the URL, whose path may itself be a secret (Slack).
  const name = error instanceof Error ? error.name : "Error";
  return `request failed (${name})`;
}

/** POSTs `body`; resolves with the answer's status once its head arrives (the body is discarded). */
function post(url: URL, options: RequestOptions, body: Buffer): Promise<number> {
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise<number>((resolve, reject) => {
    const request = send(url, options, (response: IncomingMessage) => {
      // The answer's body is not needed (nor logged): drop it and the connection.
      response.on("error", () => undefined);
      response.destroy();
      resolve(response.statusCode ?? 0);
    });
    request.on("error", reject);
    request.end(body);
  });
}

/**
 * One POST of the stored body, signed over its exact bytes; redirects are not
 * followed. The target must be allowed (lib/notify/targets.ts): an IP
 * literal is checked before connecting, a name's addresses as it is resolved
 * for the connection, so a refused target gets no request at all.
 */
export async function sendDelivery(
  delivery: { id: string; event: string; body: string },
  webhook: { url: string; secret: string },
  timeoutMs: number,
  targets: TargetOptions = {},
): Promise<Outcome> {
  const bytes = Buffer.from(delivery.body, "utf8");
  const allow = targets.allow ?? config().BATON_WEBHOOK_ALLOWED_TARGETS;
  try {
    const url = new URL(webhook.url);
    const host = normaliseHost(url.hostname);
    if (ipaddr.isValid(host)) {
      const problem = addressProblem(host, host, allow);
      if (problem) throw new RefusedTargetError(problem, false);
    }
    const status = await post(
      url,
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "content-length": String(bytes.length),
          "user-agent": "Baton-Webhooks/1",
          [SIGNATURE_HEADER]: signBody(bytes, webhook.secret),
          [EVENT_HEADER]: delivery.event,
          [DELIVERY_HEADER]: delivery.id,
        },
        // A connection of its own: never one opened for an earlier (differently resolved) attempt.
        agent: false,
        lookup: guardedLookup(host, allow, targets.resolveHost ?? resolveWithDns),
        signal: AbortSignal.timeout(timeoutMs),
      },
      bytes,
    );
    if (status >= 200 && status < 300) return { delivered: true, status, error: null };
    const redirect = status >= 300 && status < 400 ? " (a redirect; Baton does not follow redirects: give the final URL)" : "";
    return { delivered: false, status, error: `HTTP ${status}${redirect}` };
  } catch (error) {
    return { delivered: false, status: null, error: describeFailure(error, timeoutMs) };
  }
}

/** The wait before attempt `attempts + 1`, jittered. */
export function retryDelay(attempts: number, delays: readonly number[], jitter: number): number {
  const base = delays[Math.min(attempts - 1, delays.length - 1)] ?? 0;
  return Math.max(0, Math.round(base * (1 + jitter * (2 * Math.random() - 1))));
}

async function recordOutcome(delivery: Claimed, outcome: Outcome, options: Required<Pick<DeliveryWorkerOptions, "retryDelaysMs" | "jitter">>): Promise<void> {
  const now = new Date();
  const attempts = delivery.attempts + 1;
  const givingUp = !outcome.delivered && attempts >= options.retryDelaysMs.length + 1;
  const then = outcome.delivered
    ? Prisma.sql`"status" = 'delivered', "deliveredAt" = ${now}`
    : givingUp
      ? Prisma.sql`"status" = 'failed'`
      : Prisma.sql`"nextAttemptAt" = ${new Date(now.getTime() + retryDelay(attempts, options.retryDelaysMs, options.jitter))}`;
  // Only while the claim is ours: a webhook deleted (or disabled) meanwhile has the last word.
  // One raw statement (a delivery's outcome is written once per attempt, without Prisma's compiling).
  await inSqlTransaction((sql) =>
    sql.execute(
      Prisma.sql`UPDATE "WebhookDelivery" SET "attempts" = ${attempts}, "lastStatus" = ${outcome.status}, "lastError" = ${outcome.error}, "lockedUntil" = NULL, ${then}
        WHERE "id" = ${delivery.id} AND "status" = 'pending' AND "lockedUntil" = ${delivery.lease}`,
    ),
  );
  if (givingUp) {
    console.warn(`baton: webhook "${delivery.webhook?.name}" gave up delivery ${delivery.id} (${delivery.event}) after ${attempts} attempts: ${outcome.error}`);
  }
}

/** One step: claims the due deliveries and sends them (concurrently). True when a full batch was claimed. */
export async function deliverStep(options: DeliveryWorkerOptions = {}): Promise<boolean> {
  const timeoutMs = options.timeoutMs ?? config().BATON_WEBHOOK_TIMEOUT_MS;
  const limit = options.batchSize ?? DELIVERY_BATCH;
  const retry = { retryDelaysMs: options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS, jitter: options.jitter ?? RETRY_JITTER };
  const now = new Date();
  // A hint without a transaction (it may see uncommitted rows): most steps end here.
  const [due] = await (await sqlExecutor()).query<{ id: string }>(Prisma.sql`SELECT "id" FROM "WebhookDelivery" WHERE ${dueSql(now)} LIMIT 1`);
  if (!due) return false;
  // The claim outlives the longest attempt, so it never expires while a request is still running.
  const claimed = await claimDue(limit, now, new Date(now.getTime() + timeoutMs + 60_000));
  await Promise.all(
    claimed.map(async (delivery) => {
      const webhook = delivery.webhook;
      if (webhook?.enabled) {
        await recordOutcome(delivery, await sendDelivery(delivery, webhook, timeoutMs, { resolveHost: options.resolveHost }), retry);
        return;
      }
      // Disabled (or deleted) between the enqueue and now: given up, and the log says why.
      await inTransaction((tx) =>
        tx.webhookDelivery.updateMany({
          where: { id: delivery.id, status: "pending", lockedUntil: delivery.lease },
          data: { status: "failed", lastError: "not sent: the webhook was disabled", lockedUntil: null },
        }),
      );
    }),
  );
  return claimed.length === limit;
}

/** Starts the delivery loop. */
export function startDeliveryWorker(options: DeliveryWorkerOptions = {}): PollingLoop {
  return startPollingLoop({ name: "webhook delivery", intervalMs: options.intervalMs ?? DELIVERY_INTERVAL_MS, step: () => deliverStep(options) });
}
