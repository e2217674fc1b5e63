import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Person } from "../auth/roles";
import { createFirstAdmin } from "../auth/users";
import { database } from "../db/client";
import { answer, answerShared, decide } from "../human/actions";
import { ingestPacket } from "../ingest/ingest";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { allowWebhookTargetsForThisFile } from "@/testing/webhook-targets";
import { scheduleWriteBack } from "../human/writeback/write-human-section";
import { startDeliveryWorker } from "./deliver";
import type { NotificationEvent, WebhookFormat } from "./events";
import type { PollingLoop } from "./loop";
import { notifyUntilIdle, startWebhookNotifier } from "./notifier";
import { verifySignature } from "./signature";
import { startTestReceiver, type TestReceiver } from "@/testing/webhook-receiver";
import { createWebhook, deleteWebhook } from "./webhooks";
import { newWebhookSchema } from "./dto";

/** Decision webhooks: people's approvals, interventions and answers, each delivered once, never rate-limited. */
freshDatabaseForThisFile();
// Webhooks post to 127.0.0.1 (a local receiver, or nothing): allowed only when listed.
allowWebhookTargetsForThisFile("127.0.0.1");

const PUBLIC_URL = "https://baton.example.com";
const DECISIONS: NotificationEvent[] = ["decision.approved", "decision.intervened", "question.answered"];
let person: Person;
let serial = 0;
const threadsUsed: string[] = [];
const hooks: string[] = [];

beforeAll(async () => {
  const admin = await createFirstAdmin({ username: "mei", password: "a long enough password" });
  person = { id: admin.id, username: admin.username, role: admin.role };
});
beforeEach(async () => {
  await notifyUntilIdle();
});
afterEach(async () => {
  for (const id of hooks.splice(0)) await deleteWebhook("the-admin", id);
});
afterAll(async () => {
  await scheduleWriteBack(threadsUsed);
});

async function hook(events: NotificationEvent[], format: WebhookFormat = "generic", url = "http://127.0.0.1:9/unused") {
  const created = await createWebhook("the-admin", newWebhookSchema.parse({ name: `hook-${++serial}`, url, format, events, secret: "the-receivers-secret-0123" }));
  hooks.push(created.webhook.id);
  return created.webhook;
}

async function newThread(extra: Record<string, unknown> = {}) {
  const key = `decide/thread-${++serial}`;
  threadsUsed.push(key);
  const stored = await ingestPacket(
    { thread: key, agent: "claude", project: "billing", branch: "main", summary: "s", next_action: "Run the migration on staging", ...extra },
    { kind: "http", actor: "test" },
  );
  return { key, packetId: stored.packet_id };
}

async function deliveriesOf(webhookId: string) {
  const rows = await (await database()).webhookDelivery.findMany({ where: { webhookId }, orderBy: { id: "asc" } });
  return rows.map((row) => ({ ...row, json: JSON.parse(row.body) as Record<string, unknown> }));
}

describe("decision webhooks", () => {
  it("announce every approval, intervention and answer on one thread, none rate-limited, each with the section it left", async () => {
    const webhook = await hook(DECISIONS);
    const { key, packetId } = await newThread({ questions_for_human: ["Which region first?", { id: "q-flag", question: "Keep the flag?" }] });
    await decide(person, key, { kind: "approved", packet_id: packetId, base_revision: 0, note: "go ahead" });
    await decide(person, key, { kind: "intervened", packet_id: packetId, base_revision: 1, question: "Check staging first." });
    await answer(person, key, { packet_id: packetId, base_revision: 2, answers: [{ question_id: "q0", answer: "eu-west" }, { question_id: "q-flag", answer: "yes" }] });
    await decide(person, key, { kind: "approved", packet_id: packetId, base_revision: 3 });
    await notifyUntilIdle({ publicUrl: PUBLIC_URL });

    const rows = await deliveriesOf(webhook.id);
    expect(rows.map((row) => [row.event, row.status, row.threadKey])).toEqual([
      ["decision.approved", "pending", key],
      ["decision.intervened", "pending", key],
      ["question.answered", "pending", key],
      ["decision.approved", "pending", key],
    ]);
    const [approved, intervened, answered, again] = rows.map((row) => row.json);
    const handoffUrl = `${PUBLIC_URL}/api/v1/threads/${encodeURIComponent(key)}/handoff`;
    expect(approved).toMatchObject({
      event: "decision.approved",
      thread: { key, url: `${PUBLIC_URL}/threads/${encodeURIComponent(key)}`, agent: "claude", project: "billing", branch: "main" },
      packet_id: packetId,
      summary: "mei approved: Run the migration on staging",
      detail: { revision: 1, decision: { kind: "approved", by: "mei", note: "go ahead" }, next_action: "Run the migration on staging" },
      human: { revision: 1, decision: { kind: "approved", by: "mei", note: "go ahead" }, answers: [], questions: [] },
      handoff_url: handoffUrl,
    });
    expect(intervened).toMatchObject({
      summary: "mei intervened: Check staging first.",
      detail: { revision: 2, question: { id: "h1", text: "Check staging first.", blocking: true } },
      human: { revision: 2, decision: { kind: "intervened" }, questions: [{ id: "h1" }] },
      handoff_url: handoffUrl,
    });
    expect(answered).toMatchObject({
      summary: "mei answered: Which region first? (and 1 more)",
      detail: {
        revision: 3,
        answers: [
          { question_id: "q0", question: "Which region first?", answer: "eu-west" },
          { question_id: "q-flag", question: "Keep the flag?", answer: "yes" },
        ],
      },
      human: { revision: 3, answers: [{ question_id: "q0" }, { question_id: "q-flag" }] },
    });
    // The section as that action left it, not as it is now.
    expect((answered!.human as { decision: { kind: string } }).decision.kind).toBe("intervened");
    expect(again).toMatchObject({ human: { revision: 4, decision: { kind: "approved" } }, detail: { revision: 4 } });

    // Enqueued once: the notifier does not go over them again.
    await notifyUntilIdle({ publicUrl: PUBLIC_URL });
    expect(await deliveriesOf(webhook.id)).toHaveLength(4);
  });

  it("go only to webhooks that subscribe to them; a later answer's message lists only its own answers", async () => {
    const decisions = await hook(["decision.approved"]);
    const answers = await hook(["question.answered"]);
    const questions = await hook(["question.asked"]);
    const { key, packetId } = await newThread({ questions_for_human: ["A?", "B?"] });
    await answer(person, key, { packet_id: packetId, base_revision: 0, answers: [{ question_id: "q0", answer: "a" }] });
    await answer(person, key, { packet_id: packetId, base_revision: 1, answers: [{ question_id: "q1", answer: "b" }] });
    await notifyUntilIdle();

    expect(await deliveriesOf(decisions.id)).toEqual([]);
    expect((await deliveriesOf(questions.id)).map((row) => row.event)).toEqual(["question.asked"]);
    const answered = await deliveriesOf(answers.id);
    expect(answered.map((row) => row.json.detail)).toEqual([
      { revision: 1, answers: [{ question_id: "q0", question: "A?", answer: "a" }] },
      { revision: 2, answers: [{ question_id: "q1", question: "B?", answer: "b" }] },
    ]);
    expect(answered[1]!.json.summary).toBe("mei answered: B?");
  });

  it("one shared answer is one message per thread it was written to", async () => {
    const webhook = await hook(["question.answered"]);
    const first = await newThread({ questions_for_human: ["Same question?"] });
    const second = await newThread({ questions_for_human: ["Same question?"] });
    await answerShared(person, {
      answer: "yes",
      targets: [first, second].map(({ key, packetId }) => ({ thread_key: key, packet_id: packetId, base_revision: 0, question_id: "q0" })),
    });
    await notifyUntilIdle();
    expect((await deliveriesOf(webhook.id)).map((row) => [row.threadKey, row.status])).toEqual([
      [first.key, "pending"],
      [second.key, "pending"],
    ]);
  });

  it("are delivered signed like every webhook, and read in Slack", async () => {
    const receiver: TestReceiver = await startTestReceiver();
    const loops: PollingLoop[] = [];
    try {
      const generic = await hook(["decision.approved"], "generic", receiver.url);
      const slack = await hook(["decision.intervened"], "slack", receiver.url);
      const delivery = startDeliveryWorker({ intervalMs: 15, retryDelaysMs: [40], jitter: 0, timeoutMs: 2_000 });
      loops.push(delivery, startWebhookNotifier({ intervalMs: 15, onEnqueued: () => delivery.wake() }));

      const { key, packetId } = await newThread();
      await decide(person, key, { kind: "approved", packet_id: packetId, base_revision: 0 });
      await decide(person, key, { kind: "intervened", packet_id: packetId, base_revision: 1, question: "Stop <here> & explain." });
      const requests = await receiver.waitFor(2);

      const approved = requests.find((request) => request.headers["x-baton-event"] === "decision.approved")!;
      const [row] = await deliveriesOf(generic.id);
      expect(approved.body.equals(Buffer.from(row!.body, "utf8"))).toBe(true);
      expect(verifySignature(approved.body, "the-receivers-secret-0123", approved.headers["x-baton-signature"] as string)).toBe(true);
      expect(approved.headers["x-baton-delivery"]).toBe(row!.id);

      const intervened = requests.find((request) => request.headers["x-baton-event"] === "decision.intervened")!;
      const message = JSON.parse(intervened.body.toString("utf8")) as { text: string; blocks: { text?: { text: string } }[] };
      expect(message.text).toBe(`Intervened: mei intervened: Stop &lt;here&gt; &amp; explain. (${key})`);
      expect(message.blocks[1]!.text!.text).toBe("• [blocking] Stop &lt;here&gt; &amp; explain.");
      await expect.poll(async () => (await deliveriesOf(slack.id)).map((delivery) => delivery.status)).toEqual(["delivered"]);
    } finally {
      await Promise.all(loops.map((loop) => loop.stop()));
      await receiver.close();
    }
  });
});
