import { describe, expect, it } from "vitest";
import { database, inTransaction } from "../db/client";
import { expectBatonError } from "@/testing/expect-baton-error";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { allowWebhookTargetsForThisFile } from "@/testing/webhook-targets";
import { parseInput } from "../core/parse-input";
import { deliveryPageQuerySchema, newWebhookSchema, webhookChangeSchema } from "./dto";
import { changeWebhook, createWebhook, deleteWebhook, listDeliveries, listWebhooks } from "./webhooks";

freshDatabaseForThisFile();
// 127.0.0.1 is allowed only when listed; the public names are listed too, so that no
// test here asks a DNS server (the target checks are tested in targets.test.ts).
allowWebhookTargetsForThisFile("127.0.0.1,e.com,hooks.slack.com");

// As the routes call them: the input parsed at the boundary (lib/http/route.ts), then the call.
const create = async (actor: string, input: unknown) => createWebhook(actor, parseInput(newWebhookSchema, input, "webhook"));
const change = async (actor: string, id: string, input: unknown) => changeWebhook(actor, id, parseInput(webhookChangeSchema, input, "webhook change"));
const deliveries = async (id: string, query: Record<string, string>) => listDeliveries(id, parseInput(deliveryPageQuerySchema, query, "query"));

const SLACK_URL = "https://hooks.slack.com/services/T000/B000/very-secret-path";

async function webhookEvents() {
  const rows = await (await database()).ledgerEvent.findMany({ where: { kind: { startsWith: "webhook_" } }, orderBy: { seq: "asc" } });
  return rows.map((row) => ({ kind: row.kind, actor: row.actor, data: JSON.parse(row.data) as Record<string, unknown>, raw: row.data }));
}

describe("webhooks admin", () => {
  it("creates with a generated secret shown once; lists it as ••••last4; the ledger has neither secret nor URL path", async () => {
    const created = await create("ada", { name: " Ops channel ", url: SLACK_URL, format: "slack", events: ["risk.critical", "question.asked", "risk.critical"] });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(created.webhook).toMatchObject({
      name: "Ops channel",
      url: SLACK_URL,
      format: "slack",
      events: ["question.asked", "risk.critical"],
      enabled: true,
      secret_hint: `••••${created.secret!.slice(-4)}`,
      created_by: "ada",
    });
    const listed = await listWebhooks();
    expect(listed).toEqual([created.webhook]);
    expect(JSON.stringify(listed)).not.toContain(created.secret!);

    const events = await webhookEvents();
    expect(events.at(-1)).toMatchObject({ kind: "webhook_created", actor: "ada", data: { name: "Ops channel", url: "https://hooks.slack.com/…" } });
    expect(events.at(-1)!.raw).not.toContain(created.secret!);
    expect(events.at(-1)!.raw).not.toContain("very-secret-path");
    await deleteWebhook("ada", created.webhook.id);
  });

  it("keeps a secret the admin gives (and does not send it back)", async () => {
    const created = await create("ada", { name: "mine", url: "http://127.0.0.1:9/x", secret: "sixteen-chars-ok!", events: ["thread.stale"] });
    expect(created.secret).toBeNull();
    expect(created.webhook.secret_hint).toBe("••••-ok!");
    expect(created.webhook.format).toBe("generic");
    await deleteWebhook("ada", created.webhook.id);
  });

  it("refuses URLs that are not http(s), short secrets, unknown or no events, with field names", async () => {
    const ftp = await expectBatonError(create("ada", { name: "x", url: "ftp://example.com/x", events: ["risk.critical"] }), "invalid_request");
    expect(ftp.message).toMatch(/url: url must be an http:\/\/ or https:\/\/ address; "ftp:"/);
    const file = await expectBatonError(create("ada", { name: "x", url: "file:///etc/passwd", events: ["risk.critical"] }), "invalid_request");
    expect(file.details).toEqual({ fields: [{ field: "url", problem: expect.stringMatching(/http:\/\/ or https:\/\//) }] });
    await expectBatonError(create("ada", { name: "x", url: "not a url", events: ["risk.critical"] }), "invalid_request");
    const short = await expectBatonError(create("ada", { name: "x", url: "https://e.com", secret: "short", events: ["risk.critical"] }), "invalid_request");
    expect(short.message).toMatch(/secret: secret must be at least 16 characters/);
    const unknown = await expectBatonError(create("ada", { name: "x", url: "https://e.com", events: ["deploy.done"] }), "invalid_request");
    expect(unknown.message).toMatch(/events\.0: events must be some of question\.asked/);
    await expectBatonError(create("ada", { name: "x", url: "https://e.com", events: [] }), "invalid_request");
    await expectBatonError(create("ada", { name: "x", url: "https://e.com", events: ["risk.critical"], extra: 1 }), "invalid_request");
    expect(await listWebhooks()).toEqual([]);
  });

  it("changes events and enabled; disabling gives up pending deliveries; a new secret is recorded as rotated, never written", async () => {
    const { webhook } = await create("ada", { name: "w", url: "https://e.com/hook", events: ["risk.critical"] });
    const now = new Date();
    await inTransaction((tx) =>
      tx.webhookDelivery.createMany({
        data: [
          { id: "wd_a", webhookId: webhook.id, event: "risk.critical", threadKey: "t", body: "{}", status: "pending", nextAttemptAt: now, createdAt: now },
          { id: "wd_b", webhookId: webhook.id, event: "risk.critical", threadKey: "t", body: "{}", status: "delivered", nextAttemptAt: now, createdAt: now },
        ],
      }),
    );
    const changed = await change("bob", webhook.id, { events: ["thread.stale", "verdict.failed"], enabled: false, secret: "a-brand-new-secret-1234" });
    expect(changed).toMatchObject({ events: ["verdict.failed", "thread.stale"], enabled: false, secret_hint: "••••1234" });
    const page = await deliveries(webhook.id, {});
    expect(page.deliveries.map((row) => [row.id, row.status, row.last_error])).toEqual([
      ["wd_b", "delivered", null],
      ["wd_a", "failed", "not sent: the webhook was disabled"],
    ]);
    const event = (await webhookEvents()).at(-1)!;
    expect(event).toMatchObject({ kind: "webhook_changed", actor: "bob", data: { changed: ["events", "enabled", "secret"], enabled: false } });
    expect(event.raw).not.toContain("a-brand-new-secret");

    await expectBatonError(change("bob", webhook.id, {}), "invalid_request");
    await expectBatonError(change("bob", webhook.id, { url: "gopher://e.com" }), "invalid_request");
    await expectBatonError(change("bob", "wh_nope", { enabled: true }), "not_found");

    const deleted = await deleteWebhook("bob", webhook.id);
    expect(deleted.id).toBe(webhook.id);
    expect(await (await database()).webhookDelivery.count({ where: { webhookId: webhook.id } })).toBe(0);
    expect((await webhookEvents()).at(-1)).toMatchObject({ kind: "webhook_deleted", actor: "bob", data: { webhook_id: webhook.id } });
    await expectBatonError(deleteWebhook("bob", webhook.id), "not_found");
    await expectBatonError(deliveries(webhook.id, {}), "not_found");
  });

  it("pages the delivery log newest first", async () => {
    const { webhook } = await create("ada", { name: "paged", url: "https://e.com/hook", events: ["risk.critical"] });
    const base = Date.parse("2026-11-30T10:00:00Z");
    await inTransaction((tx) =>
      tx.webhookDelivery.createMany({
        data: Array.from({ length: 5 }, (_, index) => ({
          id: `wd_${index}`,
          webhookId: webhook.id,
          event: "risk.critical",
          threadKey: `t${index}`,
          body: "{}",
          status: index === 4 ? "pending" : "suppressed",
          nextAttemptAt: new Date(base + index),
          createdAt: new Date(base + index),
        })),
      }),
    );
    const first = await deliveries(webhook.id, { limit: "2" });
    expect(first.deliveries.map((row) => row.id)).toEqual(["wd_4", "wd_3"]);
    expect(first.deliveries[0]!.next_attempt_at).toBe(new Date(base + 4).toISOString());
    expect(first.deliveries[1]!.next_attempt_at).toBeNull();
    const second = await deliveries(webhook.id, { limit: "2", before: first.next_before! });
    expect(second.deliveries.map((row) => row.id)).toEqual(["wd_2", "wd_1"]);
    const last = await deliveries(webhook.id, { limit: "2", before: second.next_before! });
    expect(last).toMatchObject({ deliveries: [{ id: "wd_0" }], next_before: null });
    await expectBatonError(deliveries(webhook.id, { limit: "0" }), "invalid_request");
    await deleteWebhook("ada", webhook.id);
  });
});
