import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { database } from "../db/client";
import { ingestPacket } from "../ingest/ingest";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { allowWebhookTargetsForThisFile, setAllowedWebhookTargets } from "@/testing/webhook-targets";
import { deliverStep, retryDelay, startDeliveryWorker, type DeliveryWorkerOptions } from "./deliver";
import type { NotificationEvent, WebhookFormat } from "./events";
import type { PollingLoop } from "./loop";
import { notifyUntilIdle, startWebhookNotifier } from "./notifier";
import { verifySignature } from "./signature";
import type { ResolveHost } from "./targets";
import { startTestReceiver, type ReceivedRequest, type TestReceiver } from "@/testing/webhook-receiver";
import { createWebhook, deleteWebhook } from "./webhooks";
import { newWebhookSchema } from "./dto";

/**
 * The webhooks' integration test: a real local HTTP receiver, the real
 * notifier and delivery worker on a real database file.
 */
freshDatabaseForThisFile();
// The receiver listens on 127.0.0.1, which webhooks may reach only when listed.
allowWebhookTargetsForThisFile("127.0.0.1");

const SECRET = "the-receivers-secret-0123";
/** Tiny waits so that retries happen within the test. */
const FAST: DeliveryWorkerOptions = { intervalMs: 15, retryDelaysMs: [40, 40, 40], jitter: 0, timeoutMs: 2_000 };

let serial = 0;
const uniqueThread = (name: string) => `deliver/${name}-${++serial}`;
let receiver: TestReceiver;
const hooks: string[] = [];
const loops: PollingLoop[] = [];

beforeEach(async () => {
  await notifyUntilIdle();
  receiver = await startTestReceiver();
});
afterEach(async () => {
  await Promise.all(loops.splice(0).map((loop) => loop.stop()));
  for (const id of hooks.splice(0)) await deleteWebhook("the-admin", id);
  await receiver.close();
});

/** A webhook to the receiver for `events`; `target` names it another way (a host name) and resolves that name at creation. */
async function hook(events: NotificationEvent[], format: WebhookFormat = "generic", secret: string | undefined = SECRET, target: { url?: string; resolveHost?: ResolveHost } = {}) {
  const body = { name: `hook-${++serial}`, url: target.url ?? receiver.url, format, events, ...(secret ? { secret } : {}) };
  const created = await createWebhook("the-admin", newWebhookSchema.parse(body), { resolveHost: target.resolveHost });
  hooks.push(created.webhook.id);
  return { ...created.webhook, secret: secret ?? created.secret! };
}

const ask = (thread: string, question: string, extra: Record<string, unknown> = {}) =>
  ingestPacket({ thread, summary: "s", next_action: "n", questions_for_human: [question], ...extra }, { kind: "http", actor: "test" });

function startLoops(worker: DeliveryWorkerOptions = FAST) {
  const delivery = startDeliveryWorker(worker);
  const notifier = startWebhookNotifier({ intervalMs: 15, onEnqueued: () => delivery.wake() });
  loops.push(delivery, notifier);
  return { delivery, notifier };
}

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > until) throw new Error(`not reached within ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const deliveriesOf = async (webhookId: string) => (await database()).webhookDelivery.findMany({ where: { webhookId }, orderBy: { id: "asc" } });
const header = (request: ReceivedRequest, name: string) => request.headers[name] as string | undefined;

describe("delivery to a local receiver", () => {
  it("arrives signed over the exact bytes, as generic JSON and as a Slack message", async () => {
    const generic = await hook(["question.asked"], "generic");
    const slack = await hook(["question.asked"], "slack", undefined);
    const thread = uniqueThread("signed");
    const { packet_id } = await ask(thread, "Ship it — or wait for the “café” fix?", { agent: "claude" });
    startLoops();
    const requests = await receiver.waitFor(2);
    await eventually(
      async () => [...(await deliveriesOf(generic.id)), ...(await deliveriesOf(slack.id))].map((row) => row.status),
      (statuses) => statuses.every((status) => status === "delivered"),
    );

    const byDelivery = new Map(requests.map((request) => [header(request, "x-baton-delivery"), request]));
    const [genericRow] = await deliveriesOf(generic.id);
    const [slackRow] = await deliveriesOf(slack.id);
    const toGeneric = byDelivery.get(genericRow!.id)!;
    const toSlack = byDelivery.get(slackRow!.id)!;
    for (const [request, secret, row] of [[toGeneric, generic.secret, genericRow!], [toSlack, slack.secret, slackRow!]] as const) {
      expect(request.method).toBe("POST");
      expect(header(request, "content-type")).toBe("application/json");
      expect(header(request, "x-baton-event")).toBe("question.asked");
      // The exact bytes (non-ASCII included) are what is signed and what was stored.
      expect(request.body.equals(Buffer.from(row.body, "utf8"))).toBe(true);
      expect(verifySignature(request.body, secret, header(request, "x-baton-signature"))).toBe(true);
      expect(verifySignature(request.body, "some-other-secret-000", header(request, "x-baton-signature"))).toBe(false);
      expect(row).toMatchObject({ attempts: 1, lastStatus: 200, lastError: null, lockedUntil: null });
    }

    expect(JSON.parse(toGeneric.body.toString("utf8"))).toEqual({
      id: genericRow!.id,
      event: "question.asked",
      created_at: genericRow!.createdAt.toISOString(),
      ledger_seq: expect.any(Number),
      thread: { key: thread, url: `http://localhost:3000/threads/${encodeURIComponent(thread)}`, topic: null, agent: "claude", project: null, branch: null },
      packet_id,
      summary: "claude asks: Ship it — or wait for the “café” fix?",
      detail: { questions: [{ id: expect.any(String), question: "Ship it — or wait for the “café” fix?", blocking: false, options: [] }] },
    });
    const slackBody = JSON.parse(toSlack.body.toString("utf8")) as { text: string; blocks: { type: string; text?: { text: string } }[] };
    expect(slackBody.text).toBe(`New question: claude asks: Ship it — or wait for the “café” fix? (${thread})`);
    expect(slackBody.blocks[0]!.text!.text).toBe(
      `*New question* · <http://localhost:3000/threads/${encodeURIComponent(thread)}|${thread}>\nclaude asks: Ship it — or wait for the “café” fix?`,
    );
  });

  it("a receiver that fails twice (500, 500) gets the delivery on the third try", async () => {
    const webhook = await hook(["question.asked"]);
    receiver.script.push(500, 500);
    await ask(uniqueThread("flaky"), "Retry me?");
    startLoops();
    const [row] = await eventually(() => deliveriesOf(webhook.id), (rows) => rows[0]?.status === "delivered");
    expect(row).toMatchObject({ status: "delivered", attempts: 3, lastStatus: 200, lastError: null });
    expect(receiver.requests).toHaveLength(3);
    const ids = receiver.requests.map((request) => header(request, "x-baton-delivery"));
    expect(new Set(ids)).toEqual(new Set([row!.id]));
    // Every attempt sends the same signed bytes.
    expect(new Set(receiver.requests.map((request) => request.body.toString("base64"))).size).toBe(1);
  });

  it("gives up after the last attempt, keeping the last status", async () => {
    const webhook = await hook(["question.asked"]);
    receiver.script.push(503, 503, 503, 503, 503);
    await ask(uniqueThread("down"), "Anyone there?");
    startLoops();
    const [row] = await eventually(() => deliveriesOf(webhook.id), (rows) => rows[0]?.status === "failed");
    expect(row).toMatchObject({ status: "failed", attempts: 4, lastStatus: 503, lastError: "HTTP 503" });
    expect(receiver.requests).toHaveLength(4);
  });

  it("does not follow redirects, and gives a request that hangs up to its timeout", async () => {
    const webhook = await hook(["question.asked"]);
    receiver.script.push(302, 0);
    await ask(uniqueThread("redirect"), "Where to?");
    startLoops({ ...FAST, timeoutMs: 300 });
    const seen: string[] = [];
    const [row] = await eventually(
      async () => {
        const rows = await deliveriesOf(webhook.id);
        if (rows[0]?.lastError && !seen.includes(rows[0].lastError)) seen.push(rows[0].lastError);
        return rows;
      },
      (rows) => rows[0]?.status === "delivered",
    );
    expect(seen).toEqual([expect.stringMatching(/^HTTP 302 \(a redirect; Baton does not follow redirects/), "no answer within 300 ms"]);
    expect(row).toMatchObject({ attempts: 3, lastStatus: 200 });
    expect(receiver.requests.map((request) => request.path)).toEqual(["/hook", "/hook", "/hook"]);
  });

  it("a restart in between loses nothing: stopped mid-way, new loops on the same database deliver each exactly once", async () => {
    const webhook = await hook(["question.asked"]);
    receiver.script.push(500);
    const first = startLoops({ ...FAST, retryDelaysMs: [400, 400] });
    await ask(uniqueThread("before-restart"), "Before?");
    await receiver.waitFor(1);
    // "Crash": both loops stop with the first delivery waiting for its retry...
    await Promise.all([first.delivery.stop(), first.notifier.stop()]);
    // ...and an event arrives while nothing runs.
    await ask(uniqueThread("during-restart"), "During?");
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(receiver.requests).toHaveLength(1);
    expect(await deliveriesOf(webhook.id)).toHaveLength(1);

    startLoops({ ...FAST, retryDelaysMs: [400, 400] });
    const rows = await eventually(() => deliveriesOf(webhook.id), (found) => found.length === 2 && found.every((row) => row.status === "delivered"));
    // A moment more (real time: a duplicate would be a send that happens): nothing is sent twice. The
    // loops poll every 15 ms, and the stopped loop's retry (400 ms after the 500) was due before row 0 was delivered.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const sent = receiver.requests.map((request) => header(request, "x-baton-delivery"));
    expect(sent).toHaveLength(3);
    expect(sent.filter((id) => id === rows[0]!.id)).toHaveLength(2);
    expect(sent.filter((id) => id === rows[1]!.id)).toHaveLength(1);
    expect(rows.map((row) => row.attempts)).toEqual([2, 1]);
  });

  it("a burst of 20 events for one thread yields one message", async () => {
    const webhook = await hook(["question.asked"]);
    startLoops();
    const thread = uniqueThread("burst");
    for (let index = 0; index < 20; index++) await ask(thread, `Burst question ${index}?`);
    const rows = await eventually(() => deliveriesOf(webhook.id), (found) => found.length === 20 && found.some((row) => row.status === "delivered"));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.requests).toHaveLength(1);
    expect(rows.filter((row) => row.status === "suppressed")).toHaveLength(19);
  });

  it("two workers at once send each delivery once (the claim)", async () => {
    const webhook = await hook(["question.asked"]);
    for (let index = 0; index < 8; index++) await ask(uniqueThread("claim"), "Mine or yours?");
    await notifyUntilIdle();
    // Three at a time each: their claims must not overlap.
    const full = await Promise.all([0, 1, 2].map(() => deliverStep({ ...FAST, batchSize: 3 })));
    expect(full.filter(Boolean).length).toBeGreaterThanOrEqual(2);
    const rows = await deliveriesOf(webhook.id);
    expect(rows.map((row) => row.status)).toEqual(Array(8).fill("delivered"));
    const sent = receiver.requests.map((request) => header(request, "x-baton-delivery"));
    expect(sent).toHaveLength(8);
    expect(new Set(sent).size).toBe(8);
  });
});

describe("targets at delivery (docs/decisions/025-webhook-targets.md)", () => {
  /** A name this test's resolver answers for; no DNS server is asked. */
  const NAME = "receiver.rebind.test";
  const resolvesTo =
    (address: string): ResolveHost =>
    async () => [{ address, family: 4 }];
  const nameUrl = () => receiver.url.replace("127.0.0.1", NAME);

  afterEach(() => setAllowedWebhookTargets("127.0.0.1"));

  it("a name that resolved to a public address at creation and to 127.0.0.1 now (DNS rebinding) gets no request; the log records no status", async () => {
    setAllowedWebhookTargets("");
    const webhook = await hook(["question.asked"], "generic", SECRET, { url: nameUrl(), resolveHost: resolvesTo("93.184.216.34") });
    await ask(uniqueThread("rebind"), "Who is there?");
    startLoops({ ...FAST, retryDelaysMs: [40], resolveHost: resolvesTo("127.0.0.1") });
    const [row] = await eventually(() => deliveriesOf(webhook.id), (rows) => rows[0]?.status === "failed");
    expect(row).toMatchObject({ status: "failed", attempts: 2, lastStatus: null });
    expect(row!.lastError).toMatch(/^refused: the target resolves to a loopback address/);
    expect(row!.lastError).not.toContain(NAME);
    expect(receiver.requests).toEqual([]);
  });

  it("the same name is delivered through the checked address once the list allows it (the resolver's answer is what is connected to)", async () => {
    const webhook = await hook(["question.asked"], "generic", SECRET, { url: nameUrl(), resolveHost: resolvesTo("127.0.0.1") });
    await ask(uniqueThread("resolved"), "Through the resolver?");
    startLoops({ ...FAST, resolveHost: resolvesTo("127.0.0.1") });
    const [row] = await eventually(() => deliveriesOf(webhook.id), (rows) => rows[0]?.status === "delivered");
    expect(row).toMatchObject({ attempts: 1, lastStatus: 200, lastError: null });
    expect(receiver.requests).toHaveLength(1);
    expect(header(receiver.requests[0]!, "host")).toBe(new URL(nameUrl()).host);
    expect(verifySignature(receiver.requests[0]!.body, SECRET, header(receiver.requests[0]!, "x-baton-signature"))).toBe(true);
  });

  it("an address taken off the list after creation is refused before connecting", async () => {
    const webhook = await hook(["question.asked"]);
    setAllowedWebhookTargets("");
    await ask(uniqueThread("delisted"), "Still there?");
    startLoops({ ...FAST, retryDelaysMs: [40] });
    const [row] = await eventually(() => deliveriesOf(webhook.id), (rows) => rows[0]?.status === "failed");
    expect(row).toMatchObject({ status: "failed", attempts: 2, lastStatus: null });
    expect(row!.lastError).toMatch(/^refused: the target is a loopback address; BATON_WEBHOOK_ALLOWED_TARGETS can allow it$/);
    expect(receiver.requests).toEqual([]);
  });
});

describe("retryDelay", () => {
  it("follows the schedule, stays on its last step, and varies by the jitter", () => {
    const delays = [10_000, 30_000, 90_000];
    expect([1, 2, 3, 4, 9].map((attempts) => retryDelay(attempts, delays, 0))).toEqual([10_000, 30_000, 90_000, 90_000, 90_000]);
    for (let index = 0; index < 50; index++) {
      const delay = retryDelay(2, delays, 0.2);
      expect(delay).toBeGreaterThanOrEqual(24_000);
      expect(delay).toBeLessThanOrEqual(36_000);
    }
  });
});
