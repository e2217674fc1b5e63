import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { resetConfig } from "../server/config";
import { database, inTransaction } from "../db/client";
import { ingestPacket } from "../ingest/ingest";
import { recordLedgerEvents } from "../events/ledger";
import { riskFingerprint } from "../contract/fingerprint";
import { makeTempWorkspace, type TempWorkspace } from "@/testing/temp-workspace";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { allowWebhookTargetsForThisFile } from "@/testing/webhook-targets";
import type { NotificationEvent } from "./events";
import { NOTIFIER_CURSOR, notifyUntilIdle } from "./notifier";
import { createWebhook, deleteWebhook } from "./webhooks";
import { newWebhookSchema } from "./dto";

const database_ = freshDatabaseForThisFile();
// The webhooks name 127.0.0.1 (nothing is sent): allowed only when listed.
allowWebhookTargetsForThisFile("127.0.0.1");

let serial = 0;
const uniqueThread = (name: string) => `notify/${name}-${++serial}`;
const hooks: string[] = [];

async function hook(events: NotificationEvent[], name = `hook-${++serial}`) {
  const { webhook } = await createWebhook("the-admin", newWebhookSchema.parse({ name, url: "http://127.0.0.1:9/unused", events }));
  hooks.push(webhook.id);
  return webhook;
}

// Each test starts with the ledger caught up and ends with its webhooks gone.
beforeEach(async () => {
  await notifyUntilIdle();
});
afterEach(async () => {
  for (const id of hooks.splice(0)) await deleteWebhook("the-admin", id);
});

async function ingest(thread: string, extra: Record<string, unknown> = {}, receivedAt?: Date) {
  return ingestPacket({ thread, summary: `work on ${thread}`, next_action: "continue", ...extra }, { kind: "http", actor: "test" }, receivedAt);
}

interface StoredDelivery {
  id: string;
  event: string;
  threadKey: string | null;
  status: string;
  body: Record<string, unknown>;
}

async function deliveriesOf(webhookId: string): Promise<StoredDelivery[]> {
  const rows = await (await database()).webhookDelivery.findMany({ where: { webhookId }, orderBy: { id: "asc" } });
  return rows.map((row) => ({ id: row.id, event: row.event, threadKey: row.threadKey, status: row.status, body: JSON.parse(row.body) as Record<string, unknown> }));
}

describe("what the notifier announces", () => {
  it("question.asked: only questions the previous active version did not ask (compared by normalised text)", async () => {
    const webhook = await hook(["question.asked"]);
    const thread = uniqueThread("questions");
    const first = await ingest(thread, { agent: "claude", questions_for_human: ["Which database?", { question: "May I drop the table?", blocking: true }] });
    await ingest(thread, { questions_for_human: ["  which   DATABASE? ", "May I drop the table?", "Shall I also add an index?"] });
    await ingest(thread, { questions_for_human: ["Which database?"] });
    await ingest(thread, { questions_for_human: [] });
    await notifyUntilIdle();

    const deliveries = await deliveriesOf(webhook.id);
    expect(deliveries.map((delivery) => [delivery.event, delivery.status])).toEqual([
      ["question.asked", "pending"],
      ["question.asked", "suppressed"],
    ]);
    expect(deliveries[0]!.body).toMatchObject({
      id: deliveries[0]!.id,
      event: "question.asked",
      thread: { key: thread, url: `http://localhost:3000/threads/${encodeURIComponent(thread)}`, agent: "claude" },
      packet_id: first.packet_id,
      summary: "claude asks: Which database? (and 1 more)",
      detail: {
        questions: [
          { question: "Which database?", blocking: false },
          { question: "May I drop the table?", blocking: true },
        ],
      },
    });
    expect(deliveries[1]!.body).toMatchObject({ detail: { questions: [{ question: "Shall I also add an index?" }] } });
  });

  it("risk.critical: critical risks new to the thread's critical list; the same one again is not news", async () => {
    const webhook = await hook(["risk.critical"]);
    const [a, b] = [uniqueThread("critical-a"), uniqueThread("critical-b")];
    await ingest(a, { open_risks: [{ severity: "high", detail: "Payments may double-charge" }, { severity: "low", detail: "Slow CI" }] });
    await ingest(a, { open_risks: [{ severity: "critical", detail: "Payments may double-charge" }] });
    await ingest(a, { open_risks: [{ severity: "critical", detail: "Payments may double-charge" }, { severity: "medium", detail: "Logs are noisy" }] });
    await ingest(b, { open_risks: [{ severity: "blocker", detail: "The migration drops a column" }] });
    await notifyUntilIdle();

    const deliveries = await deliveriesOf(webhook.id);
    expect(deliveries.map((delivery) => [delivery.threadKey, delivery.status])).toEqual([
      [a, "pending"],
      [b, "pending"],
    ]);
    expect(deliveries[0]!.body).toMatchObject({
      summary: "New critical risk: Payments may double-charge",
      detail: { risks: [{ fingerprint: riskFingerprint("Payments may double-charge"), detail: "Payments may double-charge" }] },
    });
  });

  describe("verdict.failed", () => {
    let workspace: TempWorkspace;
    beforeEach(async () => {
      workspace = await makeTempWorkspace();
      process.env.BATON_WORKSPACE_ROOTS = `verdicts=${workspace.root}`;
      resetConfig();
    });
    afterEach(async () => {
      delete process.env.BATON_WORKSPACE_ROOTS;
      resetConfig();
      await workspace.remove();
    });

    it("from the packet's own verdict (flag) and from its reports read as failed; a passing one is quiet", async () => {
      const webhook = await hook(["verdict.failed"]);
      const [inline, report, passing] = [uniqueThread("inline"), uniqueThread("report"), uniqueThread("passing")];
      await workspace.write("ws/outputs/failed.json", JSON.stringify({ passed: false, findings: [{ severity: "high", detail: "2 tests fail" }] }));
      await workspace.write("ws/outputs/passed.json", JSON.stringify({ passed: true }));
      await ingest(inline, { verdict: { passed: false } });
      await ingest(report, { project: "verdicts", verdict_pointer: { verification: "outputs/failed.json" } });
      await ingest(passing, { project: "verdicts", verdict_pointer: { verification: "outputs/passed.json" } });
      await notifyUntilIdle();

      const deliveries = await deliveriesOf(webhook.id);
      expect(deliveries.map((delivery) => delivery.threadKey)).toEqual([inline, report]);
      for (const delivery of deliveries) {
        expect(delivery.body).toMatchObject({ event: "verdict.failed", summary: expect.stringMatching(/^The verdict failed: /) });
        expect((delivery.body.detail as { reasons: string[] }).reasons.length).toBeGreaterThan(0);
      }
    });
  });

  it("thread.stale: from the watchdog's thread_stale event, with its data as detail", async () => {
    const webhook = await hook(["thread.stale"]);
    const thread = uniqueThread("stale");
    const { packet_id } = await ingest(thread, { agent: "codex" });
    await recordLedgerEvents([{ kind: "thread_stale", threadKey: thread, actor: "watchdog", data: { last_activity: "2026-11-28T09:00:00.000Z", stale_hours: 24 } }]);
    await notifyUntilIdle();
    const [delivery] = await deliveriesOf(webhook.id);
    expect(delivery).toMatchObject({
      event: "thread.stale",
      status: "pending",
      body: {
        packet_id,
        thread: { key: thread, agent: "codex" },
        summary: "No news from this thread for 24 hours (last activity 2026-11-28T09:00:00.000Z)",
        detail: { last_activity: "2026-11-28T09:00:00.000Z", stale_hours: 24 },
      },
    });
  });

  it("risk.regressed: a resolved risk in a newer version records risk_regressed (once per regression) and is announced", async () => {
    const webhook = await hook(["risk.regressed"]);
    const thread = uniqueThread("regressed");
    const detail = "Cache keys collide across tenants";
    const fingerprint = riskFingerprint(detail);
    const t0 = Date.now();
    const at = (seconds: number) => new Date(t0 + seconds * 1000);
    await ingest(thread, { open_risks: [{ severity: "high", detail }] }, at(0));
    const resolve = async (when: Date) => {
      const { id: threadId } = await (await database()).thread.findUniqueOrThrow({ where: { key: thread } });
      await inTransaction((tx) =>
        tx.riskTriage.upsert({
          where: { threadId_fingerprint: { threadId, fingerprint } },
          create: { threadId, fingerprint, state: "resolved", severityAtTriage: "high", updatedAt: when, updatedBy: "olga" },
          update: { state: "resolved", updatedAt: when },
        }),
      );
    };
    await resolve(at(1));
    await ingest(thread, { summary: "v2", open_risks: [{ severity: "critical", detail }] }, at(2));
    await ingest(thread, { summary: "v3", open_risks: [{ severity: "critical", detail }] }, at(3));
    await notifyUntilIdle();

    const regressions = async () =>
      (await (await database()).ledgerEvent.findMany({ where: { threadKey: thread, kind: "risk_regressed" }, orderBy: { seq: "asc" } })).map((row) => ({
        actor: row.actor,
        data: JSON.parse(row.data) as unknown,
      }));
    expect(await regressions()).toEqual([{ actor: "baton", data: { fingerprint, detail, severity: "critical" } }]);
    let deliveries = await deliveriesOf(webhook.id);
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]!.body).toMatchObject({ event: "risk.regressed", detail: { risks: [{ fingerprint, severity: "critical", detail }] } });

    // Resolved again, and back again: a new regression.
    await resolve(at(4));
    await ingest(thread, { summary: "v4", open_risks: [{ severity: "high", detail }] }, at(5));
    await notifyUntilIdle();
    expect(await regressions()).toHaveLength(2);
    deliveries = await deliveriesOf(webhook.id);
    expect(deliveries.map((delivery) => delivery.status)).toEqual(["pending", "suppressed"]);
  });

  it("a packet with 5,000 risks (one regressed) is announced, and deliveries go on after it (IN lists chunked)", async () => {
    const webhook = await hook(["risk.critical", "risk.regressed", "question.asked"]);
    const thread = uniqueThread("many-risks");
    // R-0 ... R-4999: whole numbers alone would share one fingerprint.
    const risks = Array.from({ length: 5_000 }, (_, index) => ({ severity: index % 2 ? "critical" : "high", detail: `Risk R-${index}` }));
    const regressedFingerprint = riskFingerprint("Risk R-4999");
    const t0 = Date.now();
    await ingest(thread, { open_risks: risks }, new Date(t0));
    const { id: threadId } = await (await database()).thread.findUniqueOrThrow({ where: { key: thread } });
    await inTransaction((tx) =>
      tx.riskTriage.create({
        data: { threadId, fingerprint: regressedFingerprint, state: "resolved", severityAtTriage: "high", updatedAt: new Date(t0 + 1000), updatedBy: "olga" },
      }),
    );
    await ingest(thread, { summary: "v2", open_risks: risks }, new Date(t0 + 2000));
    await notifyUntilIdle();
    // Before the fix, one statement named all 5,000 fingerprints and SQLite refused it every second, for good.
    const events = (await deliveriesOf(webhook.id)).map((delivery) => delivery.event);
    expect(events).toContain("risk.critical");
    expect(events).toContain("risk.regressed");
    const later = uniqueThread("after-many-risks");
    await ingest(later, { questions_for_human: ["Still announced?"] });
    await notifyUntilIdle();
    expect((await deliveriesOf(webhook.id)).some((delivery) => delivery.threadKey === later && delivery.event === "question.asked")).toBe(true);
  });

  it("tells only enabled webhooks, subscribed to the event, that existed when it happened", async () => {
    const thread = uniqueThread("who");
    const off = await hook(["question.asked"]);
    await (await import("./webhooks")).changeWebhook("the-admin", off.id, { enabled: false });
    const other = await hook(["risk.critical"]);
    await ingest(thread, { questions_for_human: ["Before the webhook?"] });
    const late = await hook(["question.asked"]);
    await notifyUntilIdle();
    expect(await deliveriesOf(off.id)).toEqual([]);
    expect(await deliveriesOf(other.id)).toEqual([]);
    expect(await deliveriesOf(late.id)).toEqual([]);
  });
});

describe("rate limiting", () => {
  it("a burst of 20 events for one thread yields one message; the other 19 are kept as suppressed", async () => {
    const webhook = await hook(["question.asked"]);
    const thread = uniqueThread("burst");
    for (let index = 0; index < 20; index++) await ingest(thread, { questions_for_human: [`Question number ${index}?`] });
    const total = await notifyUntilIdle();
    expect(total).toMatchObject({ pending: 1, suppressed: 19 });
    const deliveries = await deliveriesOf(webhook.id);
    expect(deliveries.map((delivery) => delivery.status)).toEqual(["pending", ...Array(19).fill("suppressed")]);
    expect(deliveries[0]!.body).toMatchObject({ detail: { questions: [{ question: "Question number 0?" }] } });
  });

  it("is per (webhook, event kind, thread), not global; after 10 minutes the next one goes out", async () => {
    const both = await hook(["question.asked", "risk.critical"]);
    const questions = await hook(["question.asked"]);
    const [one, two] = [uniqueThread("limit-one"), uniqueThread("limit-two")];
    await ingest(one, { questions_for_human: ["First?"], open_risks: [{ severity: "critical", detail: "Data loss on retry" }] });
    await ingest(two, { questions_for_human: ["Elsewhere?"] });
    await ingest(one, { questions_for_human: ["Second?"] });
    await notifyUntilIdle();
    const summary = async (id: string) => (await deliveriesOf(id)).map((delivery) => [delivery.threadKey, delivery.event, delivery.status]);
    expect(await summary(both.id)).toEqual([
      [one, "question.asked", "pending"],
      [one, "risk.critical", "pending"],
      [two, "question.asked", "pending"],
      [one, "question.asked", "suppressed"],
    ]);
    expect(await summary(questions.id)).toEqual([
      [one, "question.asked", "pending"],
      [two, "question.asked", "pending"],
      [one, "question.asked", "suppressed"],
    ]);

    // The window is measured from the last message that went out (suppressed ones do not extend it).
    const eleven = new Date(Date.now() - 11 * 60 * 1000);
    await inTransaction((tx) => tx.webhookDelivery.updateMany({ where: { webhookId: both.id }, data: { createdAt: eleven } }));
    await ingest(one, { questions_for_human: ["Third?"] });
    await notifyUntilIdle();
    expect((await summary(both.id)).at(-1)).toEqual([one, "question.asked", "pending"]);
    expect((await summary(questions.id)).at(-1)).toEqual([one, "question.asked", "suppressed"]);
  });
});

describe("the cursor", () => {
  const cursor = async () => (await (await database()).workerCursor.findUniqueOrThrow({ where: { name: NOTIFIER_CURSOR } })).seq;
  const head = async () => (await (await database()).ledgerEvent.aggregate({ _max: { seq: true } }))._max.seq;

  it("two notifiers started together on one database enqueue each delivery exactly once", async () => {
    const webhook = await hook(["question.asked"]);
    const threads = Array.from({ length: 30 }, () => uniqueThread("together"));
    // Side by side: the ingest writer stores them in one commit (the notifiers' race is the subject, not the ingest).
    await Promise.all(threads.map((thread) => ingest(thread, { questions_for_human: ["Go ahead?"] })));
    const [a, b] = await Promise.all([notifyUntilIdle({ batchSize: 3 }), notifyUntilIdle({ batchSize: 3 })]);
    expect(a.pending + b.pending).toBe(30);
    // They did race: a step of one found the cursor moved by the other, and wrote nothing.
    expect(a.raced + b.raced).toBeGreaterThan(0);
    const deliveries = await deliveriesOf(webhook.id);
    expect(deliveries.map((delivery) => delivery.threadKey).sort()).toEqual([...threads].sort());
    expect(await cursor()).toBe(await head());
  });

  it("and so do two processes", async () => {
    const webhook = await hook(["question.asked"]);
    const threads = Array.from({ length: 40 }, () => uniqueThread("processes"));
    await Promise.all(threads.map((thread) => ingest(thread, { questions_for_human: ["Go ahead?"] })));

    const child = spawn(process.execPath, ["--conditions=react-server", "--import", "tsx", fileURLToPath(new URL("../../testing/webhook-notifier-child.ts", import.meta.url))], {
      env: { ...process.env, DATABASE_URL: database_().url },
      stdio: ["pipe", "pipe", "inherit"],
    });
    const lines = createInterface({ input: child.stdout! });
    const output: string[] = [];
    const ready = new Promise<void>((resolve) =>
      lines.on("line", (line) => {
        output.push(line);
        if (line === "ready") resolve();
      }),
    );
    await ready;
    child.stdin!.write("go\n");
    const here = await notifyUntilIdle({ batchSize: 2 });
    const [code] = await once(child, "exit");
    expect(code).toBe(0);
    const there = JSON.parse(output.at(-1)!) as { pending: number; lost: number };
    expect(here.pending + there.pending).toBe(40);
    expect((await deliveriesOf(webhook.id)).map((delivery) => delivery.threadKey).sort()).toEqual([...threads].sort());
    expect(await cursor()).toBe(await head());
  }, 60_000);
});

afterAll(async () => {
  await notifyUntilIdle();
});
