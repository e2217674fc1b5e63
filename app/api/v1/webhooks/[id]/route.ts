import { z } from "zod";
import { defineRoute } from "@/lib/http/route";
import { webhookChangeSchema, webhookDto } from "@/lib/notify/dto";
import { changeWebhook, deleteWebhook } from "@/lib/notify/webhooks";

export const PATCH = defineRoute({
  method: "PATCH",
  path: "/api/v1/webhooks/{id}",
  summary: "Changes any of a webhook's fields; disabling gives up its pending deliveries, a new secret signs every later attempt.",
  auth: { kind: "person", role: "admin" },
  params: z.object({ id: z.string() }),
  body: { schema: webhookChangeSchema, name: "webhook change" },
  response: { kind: "json", status: 200, schema: webhookDto },
  errors: ["not_found"],
  handler: ({ person, params, body }) => changeWebhook(person.username, params.id, body),
});

export const DELETE = defineRoute({
  method: "DELETE",
  path: "/api/v1/webhooks/{id}",
  summary: "Removes the webhook and its delivery log; answers what was deleted.",
  auth: { kind: "person", role: "admin" },
  params: z.object({ id: z.string() }),
  response: { kind: "json", status: 200, schema: webhookDto },
  errors: ["not_found"],
  handler: ({ person, params }) => deleteWebhook(person.username, params.id),
});
