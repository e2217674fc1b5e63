import { z } from "zod";
import { readJsonBody } from "@/lib/http/body";
import { jsonResponse } from "@/lib/http/respond";
import { personRoute } from "@/lib/http/route";
import { changeWebhook, deleteWebhook } from "@/lib/webhooks/webhooks";

/** PATCH /api/v1/webhooks/{id} (admin): any of {name, url, secret, format, events, enabled}; disabling gives up its pending deliveries. */
export const PATCH = personRoute<{ id: string }>("admin", async ({ request, params, person }) =>
  jsonResponse(await changeWebhook(person.username, params.id, await readJsonBody(request, z.unknown(), "webhook change"))),
);

/** DELETE /api/v1/webhooks/{id} (admin): removes the webhook and its delivery log; answers what was deleted. */
export const DELETE = personRoute<{ id: string }>("admin", async ({ params, person }) =>
  jsonResponse(await deleteWebhook(person.username, params.id)),
);
