import { defineRoute } from "@/lib/http/route";
import { createdWebhookDto, newWebhookSchema, webhookListDto } from "@/lib/notify/dto";
import { createWebhook, listWebhooks } from "@/lib/notify/webhooks";

export const GET = defineRoute({
  method: "GET",
  path: "/api/v1/webhooks",
  summary: "Every outgoing webhook; secrets only as ••••last4.",
  auth: { kind: "person", role: "admin" },
  response: { kind: "json", status: 200, schema: webhookListDto },
  handler: async () => ({ webhooks: await listWebhooks() }),
});

export const POST = defineRoute({
  method: "POST",
  path: "/api/v1/webhooks",
  summary: "Creates a webhook; without a secret one is generated, and the answer's `secret` is the only time it is shown.",
  auth: { kind: "person", role: "admin" },
  body: { schema: newWebhookSchema, name: "webhook" },
  response: { kind: "json", status: 201, schema: createdWebhookDto },
  handler: ({ person, body }) => createWebhook(person.username, body),
});
