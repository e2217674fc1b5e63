import "server-only";
import { config } from "../server/config";
import { inSqlStatements, inTransaction, sqlExecutor, type Tx } from "../db/client";
import { Prisma } from "../generated/prisma/client";
import { inChunks } from "../db/sql";
import { newId } from "../db/ids";
import { announceLedger, onLedger } from "../events/bus";
import { appendLedgerEvents } from "../events/ledger";
import { readVersionVerdicts } from "../views/verdict/version";
import { deriveNotifications, type Derivation } from "./derive";
import type { LedgerRow } from "./ledger-row";
import { verdictFailedNotification } from "./messages";
import { NOTIFICATION_EVENT_INFO, RATE_LIMIT_WINDOW_MS, type WebhookFormat } from "./events";
import { startPollingLoop, type PollingLoop } from "./loop";
import { renderBody, type Notification } from "./payload";
import { subscribedEvents, type WebhookRow } from "./webhooks";

/**
 * The notifier: follows the ledger from a persisted cursor, enqueueing each step's deliveries
 * with the cursor's advance in one transaction (docs/decisions/018-webhooks.md, 2).
 */

export const NOTIFIER_CURSOR = "webhooks";
export const NOTIFIER_BATCH = 100;
export const NOTIFIER_INTERVAL_MS = 1_000;
/** A step woken by the ledger starts at least this long after the last one: a webhook may wait this much longer. */
export const NOTIFIER_WAKE_GAP_MS = 200;

export interface NotifierOptions {
  /** How often the ledger is checked for other processes' events (in-process ones wake it at once). */
  intervalMs?: number;
  batchSize?: number;
  /** Links in messages point here; default BATON_PUBLIC_URL. */
  publicUrl?: string;
  /** Told after a step enqueued deliveries to send (the delivery worker wakes up). */
  onEnqueued?: () => void;
}

export interface NotifyStepResult {
  /** Ledger events this step went past (0 when it found none, or lost the cursor to another instance). */
  processed: number;
  /** Deliveries enqueued to send, and rate-limited ones recorded as suppressed. */
  pending: number;
  suppressed: number;
  /** There may be more to do right away. */
  more: boolean;
  /** The cursor after this step (-1 when another instance moved it first). */
  cursor: number;
  /** Steps that found the cursor moved by another instance, and wrote nothing (notifyUntilIdle adds them up). */
  raced: number;
}

const IDLE: NotifyStepResult = { processed: 0, pending: 0, suppressed: 0, more: false, cursor: -1, raced: 0 };

async function readCursor(tx: Tx): Promise<number> {
  const row = await tx.workerCursor.findUnique({ where: { name: NOTIFIER_CURSOR } });
  if (row) return row.seq;
  // From the start of the ledger: nothing recorded before the first run is lost either.
  await tx.$executeRaw`INSERT INTO "WorkerCursor" ("name", "seq") VALUES (${NOTIFIER_CURSOR}, 0) ON CONFLICT ("name") DO NOTHING`;
  return (await tx.workerCursor.findUniqueOrThrow({ where: { name: NOTIFIER_CURSOR } })).seq;
}

interface StepRead {
  cursor: number;
  rows: LedgerRow[];
  derivation: Derivation;
}

/** Reads (in a transaction, so only committed events) the next events and what they mean. */
async function readStep(batchSize: number): Promise<StepRead> {
  return inTransaction(async (tx) => {
    const cursor = await readCursor(tx);
    const rows = await tx.ledgerEvent.findMany({
      where: { seq: { gt: cursor } },
      orderBy: { seq: "asc" },
      take: batchSize,
      select: { seq: true, at: true, kind: true, threadKey: true, versionId: true, data: true },
    });
    const empty: Derivation = { notifications: [], regressions: [], verdictChecks: [] };
    if (!rows.length) return { cursor, rows, derivation: empty };
    const webhooks = await tx.webhook.findMany({ where: { enabled: true }, select: { events: true } });
    const wanted = new Set(webhooks.flatMap(subscribedEvents));
    return { cursor, rows, derivation: await deriveNotifications(tx, rows, { wanted, now: new Date() }) };
  });
}

/** Reads the verdict reports of versions that need it (files, so outside any transaction). */
async function readVerdictFailures(derivation: Derivation): Promise<{ notification: Notification; at: Date }[]> {
  const failed: { notification: Notification; at: Date }[] = [];
  for (const { check, at } of derivation.verdictChecks) {
    try {
      // As every view reads it: the recorded location's workspace and the reports sent with the packet too.
      const reading = (await readVersionVerdicts([check.base.packetId!])).get(check.base.packetId!)!;
      if (reading.summary.state === "fail") failed.push({ notification: verdictFailedNotification(check.base, reading.summary.reasons), at });
    } catch (error) {
      console.error(`baton: webhooks: the verdict of ${check.base.packetId} could not be read: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return failed;
}

/** Rows per INSERT of a step's deliveries: 9 values each, well under both databases' bound-parameter limits. */
const DELIVERIES_PER_STATEMENT = 500;

// Delivery ids are time-sortable (lib/db/ids.ts) and the log is ordered by them: one
// millisecond apart at least, so deliveries enqueued together keep their order.
let lastIdStamp = 0;
function nextDeliveryId(now: Date): string {
  lastIdStamp = Math.max(now.getTime(), lastIdStamp + 1);
  return newId("wd", lastIdStamp);
}

const rateKey = (webhookId: string, event: string, threadKey: string | null) => JSON.stringify([webhookId, event, threadKey]);

/**
 * The (webhook, event, thread) keys among these threads that had a message (sent, to send, or
 * given up) within the rate-limit window: one read per chunk of the step's threads, not one per
 * notification.
 */
async function sentRecently(tx: Tx, webhookIds: readonly string[], threadKeys: readonly string[], now: Date): Promise<Set<string>> {
  if (!webhookIds.length || !threadKeys.length) return new Set();
  const sql = await sqlExecutor(tx);
  const since = new Date(now.getTime() - RATE_LIMIT_WINDOW_MS);
  const rows = await inChunks(threadKeys, (chunk) =>
    sql.query<{ webhookId: string; event: string; threadKey: string | null }>(
      Prisma.sql`SELECT DISTINCT "webhookId", "event", "threadKey" FROM "WebhookDelivery"
        WHERE "webhookId" IN (${Prisma.join(webhookIds)}) AND "threadKey" IN (${Prisma.join(chunk)}) AND "createdAt" >= ${since} AND "status" <> 'suppressed'`,
    ),
  );
  return new Set(rows.map((row) => rateKey(row.webhookId, row.event, row.threadKey)));
}

/** Nothing can come of the next events: no enabled webhook, and no resolved risk that could regress (deriveNotifications' reads). */
const NOTHING_TO_DERIVE = Prisma.sql`NOT EXISTS (SELECT 1 FROM "Webhook" WHERE "enabled") AND NOT EXISTS (SELECT 1 FROM "RiskTriage" WHERE "state" = 'resolved')`;

/**
 * A step while nothing can come of the ledger's events (no enabled webhook, no resolved risk):
 * the cursor moves past the next batch, as the full step would, without its two serialised
 * transactions (docs/decisions/089-notifier-without-webhooks.md). A webhook created later still
 * hears only of what happened after it. Null when the full step must run: a webhook or a
 * resolved risk exists, the cursor is not stored yet, or it moved meanwhile.
 */
async function stepWithNothingToDerive(batchSize: number): Promise<NotifyStepResult | null> {
  return inSqlStatements(async (sql) => {
    // One statement, so one snapshot: the batch's events are committed ones, in seq order
    // (ledger writers commit one at a time: docs/decisions/023-postgresql.md, 6).
    const [read] = await sql.query<{ cursor: number | bigint | null; events: number | bigint; last: number | bigint | null; idle: number | bigint }>(
      Prisma.sql`WITH "cursor" AS (SELECT "seq" FROM "WorkerCursor" WHERE "name" = ${NOTIFIER_CURSOR}),
          "batch" AS (SELECT "seq" FROM "LedgerEvent" WHERE "seq" > (SELECT "seq" FROM "cursor") ORDER BY "seq" LIMIT ${batchSize})
        SELECT (SELECT "seq" FROM "cursor") AS "cursor", (SELECT count(*) FROM "batch") AS "events", (SELECT max("seq") FROM "batch") AS "last",
          CASE WHEN ${NOTHING_TO_DERIVE} THEN 1 ELSE 0 END AS "idle"`,
    );
    if (read?.cursor == null) return null;
    const cursor = Number(read.cursor);
    const events = Number(read.events);
    if (!events) return { ...IDLE, cursor };
    if (!Number(read.idle) || read.last === null) return null;
    const last = Number(read.last);
    const moved = await sql.execute(
      Prisma.sql`UPDATE "WorkerCursor" SET "seq" = ${last} WHERE "name" = ${NOTIFIER_CURSOR} AND "seq" = ${cursor} AND ${NOTHING_TO_DERIVE}`,
    );
    if (moved !== 1) return null;
    return { ...IDLE, processed: events, more: events === batchSize, cursor: last };
  });
}

/** One step: the next batch of ledger events becomes deliveries. Exported for tests; the loop calls it. */
export async function notifyStep(options: NotifierOptions = {}): Promise<NotifyStepResult> {
  const batchSize = options.batchSize ?? NOTIFIER_BATCH;
  const withNothingToDerive = await stepWithNothingToDerive(batchSize);
  if (withNothingToDerive) return withNothingToDerive;
  const publicUrl = options.publicUrl ?? config().BATON_PUBLIC_URL;
  const read = await readStep(batchSize);
  if (!read.rows.length) return { ...IDLE, cursor: read.cursor };
  const notifications = [...read.derivation.notifications, ...(await readVerdictFailures(read.derivation))].sort(
    (a, b) => a.notification.ledgerSeq - b.notification.ledgerSeq,
  );
  const lastSeq = read.rows[read.rows.length - 1]!.seq;

  const written = await inTransaction(async (tx) => {
    // The cursor moves only from where this step read it: otherwise another instance did this batch.
    const moved = await tx.workerCursor.updateMany({ where: { name: NOTIFIER_CURSOR, seq: read.cursor }, data: { seq: lastSeq } });
    if (moved.count !== 1) return null;
    const now = new Date();
    const webhooks: WebhookRow[] = await tx.webhook.findMany({ where: { enabled: true }, orderBy: { createdAt: "asc" } });
    let pending = 0;
    let suppressed = 0;
    // The step's deliveries are written together at its end: the rate limit's set holds the keys
    // sent within the window before the step (sentRecently) and those this step enqueues to send.
    const deliveries: Prisma.WebhookDeliveryCreateManyInput[] = [];
    const rateLimitedThreads = notifications.filter(({ notification }) => NOTIFICATION_EVENT_INFO[notification.event].rateLimited).map(({ notification }) => notification.threadKey);
    const sent = await sentRecently(tx, webhooks.map((webhook) => webhook.id), [...new Set(rateLimitedThreads)], now);
    for (const { notification, at } of notifications) {
      for (const webhook of webhooks) {
        // A webhook hears of what happened after it was created, not of the backlog before it.
        if (webhook.createdAt.getTime() > at.getTime() || !subscribedEvents(webhook).includes(notification.event)) continue;
        const key = rateKey(webhook.id, notification.event, notification.threadKey);
        const limited = NOTIFICATION_EVENT_INFO[notification.event].rateLimited && sent.has(key);
        const id = nextDeliveryId(now);
        deliveries.push({
          id,
          webhookId: webhook.id,
          event: notification.event,
          threadKey: notification.threadKey,
          body: renderBody(webhook.format as WebhookFormat, notification, { deliveryId: id, createdAt: now, publicUrl }),
          status: limited ? "suppressed" : "pending",
          nextAttemptAt: now,
          createdAt: now,
        });
        if (limited) suppressed++;
        else {
          pending++;
          sent.add(key);
        }
      }
    }
    for (let start = 0; start < deliveries.length; start += DELIVERIES_PER_STATEMENT) {
      await tx.webhookDelivery.createMany({ data: deliveries.slice(start, start + DELIVERIES_PER_STATEMENT) });
    }
    if (read.derivation.regressions.length) await appendLedgerEvents(tx, read.derivation.regressions, now);
    return { pending, suppressed };
  });

  if (!written) return { ...IDLE, more: true, raced: 1 };
  if (read.derivation.regressions.length) announceLedger();
  if (written.pending) options.onEnqueued?.();
  return { processed: read.rows.length, ...written, more: read.rows.length === batchSize, cursor: lastSeq, raced: 0 };
}

/** Runs steps until the ledger is caught up (tests, and a CLI that wants to flush). */
export async function notifyUntilIdle(options: NotifierOptions = {}): Promise<NotifyStepResult> {
  const total = { ...IDLE };
  for (;;) {
    const step = await notifyStep(options);
    total.processed += step.processed;
    total.pending += step.pending;
    total.suppressed += step.suppressed;
    total.cursor = step.cursor;
    total.raced += step.raced;
    if (!step.more) return total;
  }
}

/** The highest ledger seq, read without a transaction: only a hint of whether there is anything to do. */
async function ledgerHead(): Promise<number> {
  const [head] = await (await sqlExecutor()).query<{ head: number | null }>(Prisma.sql`SELECT max("seq") AS "head" FROM "LedgerEvent"`);
  return Number(head?.head ?? 0);
}

/** Starts the notifier loop: a step on every in-process ledger announcement and every `intervalMs`. */
export function startWebhookNotifier(options: NotifierOptions = {}): PollingLoop {
  // Up to the cursor this instance saw, an idle check costs one read and no transaction. After an
  // in-process announcement there is something new for sure: the step goes ahead without it.
  let handledUpTo = -1;
  let announced = false;
  const stopListening = onLedger(() => (announced = true));
  const loop = startPollingLoop({
    name: "webhook notifier",
    intervalMs: options.intervalMs ?? NOTIFIER_INTERVAL_MS,
    wakeOnLedger: true,
    // Under load the ledger moves tens of times a second: one step (2 to 3 statements) per burst, not per event.
    wakeGapMs: NOTIFIER_WAKE_GAP_MS,
    step: async () => {
      if (!announced && (await ledgerHead()) <= handledUpTo) return false;
      announced = false;
      const step = await notifyStep(options);
      handledUpTo = step.cursor;
      return step.more;
    },
  });
  return {
    wake: loop.wake,
    async stop() {
      stopListening();
      await loop.stop();
    },
  };
}
