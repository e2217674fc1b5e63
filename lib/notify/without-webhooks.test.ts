import { beforeEach, describe, expect, it } from "vitest";
import { database, inTransaction } from "../db/client";
import { ingestPacket } from "../ingest/ingest";
import { riskFingerprint } from "../contract/fingerprint";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { testsRunOnPostgresql } from "@/testing/postgresql";
import { allowWebhookTargetsForThisFile } from "@/testing/webhook-targets";
import { statementsOf } from "@/testing/count-statements";
import { NOTIFIER_CURSOR, notifyStep, notifyUntilIdle, type NotifyStepResult } from "./notifier";
import { changeWebhook, createWebhook } from "./webhooks";
import { newWebhookSchema } from "./dto";

/**
 * The notifier while no webhook is enabled and no risk is resolved (its own database: a
 * resolved risk anywhere makes every step the full one): the cursor moves past what happens
 * meanwhile, and a webhook created or enabled later hears only of what happens after
 * (docs/decisions/089-notifier-without-webhooks.md).
 */

freshDatabaseForThisFile();
allowWebhookTargetsForThisFile("127.0.0.1");

let serial = 0;
const uniqueThread = (name: string) => `quiet-notifier/${name}-${++serial}`;

async function ingest(thread: string, extra: Record<string, unknown> = {}, receivedAt?: Date) {
  return ingestPacket({ thread, summary: `work on ${thread}`, next_action: "continue", ...extra }, { kind: "http", actor: "test" }, receivedAt);
}

const cursor = async () => (await (await database()).workerCursor.findUniqueOrThrow({ where: { name: NOTIFIER_CURSOR } })).seq;
const head = async () => (await (await database()).ledgerEvent.aggregate({ _max: { seq: true } }))._max.seq ?? 0;
const deliveryThreads = async (webhookId: string) =>
  (await (await database()).webhookDelivery.findMany({ where: { webhookId }, orderBy: { id: "asc" } })).map((row) => row.threadKey);

/** Statements of a step that only moves the cursor: the read and the conditional UPDATE, and on SQLite its transaction's BEGIN and COMMIT. */
const CURSOR_ONLY_STEP = testsRunOnPostgresql() ? 2 : 4;

async function countedStep(batchSize?: number): Promise<{ step: NotifyStepResult; statements: number }> {
  let step!: NotifyStepResult;
  const statements = await statementsOf(async () => (step = await notifyStep({ batchSize })));
  return { step, statements };
}

beforeEach(async () => {
  await notifyUntilIdle();
});

describe("the notifier without an enabled webhook", () => {
  it("moves the cursor past each batch in two statements, without a transaction of its own on PostgreSQL", async () => {
    const before = await cursor();
    for (let index = 0; index < 5; index++) await ingest(uniqueThread("batch"), { questions_for_human: ["Anyone?"] });
    const events = (await head()) - before;
    const first = await countedStep(3);
    expect(first.step).toMatchObject({ processed: 3, pending: 0, suppressed: 0, more: true, raced: 0, cursor: before + 3 });
    expect(first.statements).toBe(CURSOR_ONLY_STEP);
    const rest = await notifyUntilIdle({ batchSize: 3 });
    expect(rest.processed).toBe(events - 3);
    expect(await cursor()).toBe(await head());
    // Caught up: one read.
    const idle = await countedStep();
    expect(idle.step).toMatchObject({ processed: 0, more: false, cursor: await head() });
    expect(idle.statements).toBe(testsRunOnPostgresql() ? 1 : 3);
  });

  it("a webhook created or enabled later hears only of what happened after it", async () => {
    const { webhook } = await createWebhook("the-admin", newWebhookSchema.parse({ name: "later", url: "http://127.0.0.1:9/unused", events: ["question.asked"] }));
    await changeWebhook("the-admin", webhook.id, { enabled: false });
    const whileDisabled = uniqueThread("while-disabled");
    await ingest(whileDisabled, { questions_for_human: ["Seen?"] });
    expect((await countedStep()).statements).toBe(CURSOR_ONLY_STEP);
    expect(await cursor()).toBe(await head());

    await changeWebhook("the-admin", webhook.id, { enabled: true });
    const afterEnabling = uniqueThread("after-enabling");
    await ingest(afterEnabling, { questions_for_human: ["Seen now?"] });
    const step = await notifyUntilIdle();
    expect(step.pending).toBe(1);
    expect(await deliveryThreads(webhook.id)).toEqual([afterEnabling]);
    await changeWebhook("the-admin", webhook.id, { enabled: false });
  });

  it("still records a resolved risk's regression (the full step, with no webhook to tell)", async () => {
    const thread = uniqueThread("regressed");
    const detail = "Tokens logged in plain text";
    const fingerprint = riskFingerprint(detail);
    const t0 = Date.now();
    await ingest(thread, { open_risks: [{ severity: "high", detail }] }, new Date(t0));
    const { id: threadId } = await (await database()).thread.findUniqueOrThrow({ where: { key: thread } });
    await inTransaction((tx) =>
      tx.riskTriage.create({ data: { threadId, fingerprint, state: "resolved", severityAtTriage: "high", updatedAt: new Date(t0 + 1_000), updatedBy: "olga" } }),
    );
    await ingest(thread, { summary: "v2", open_risks: [{ severity: "critical", detail }] }, new Date(t0 + 2_000));
    const { step, statements } = await countedStep();
    expect(step.processed).toBeGreaterThan(0);
    expect(statements).toBeGreaterThan(CURSOR_ONLY_STEP);
    const regressions = await (await database()).ledgerEvent.findMany({ where: { threadKey: thread, kind: "risk_regressed" } });
    expect(regressions.map((row) => JSON.parse(row.data) as unknown)).toEqual([{ fingerprint, detail, severity: "critical" }]);
  });
});
