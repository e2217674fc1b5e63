import { z } from "zod";
import { readJsonBody } from "@/lib/http/body";
import { jsonResponse } from "@/lib/http/respond";
import { personRoute } from "@/lib/http/route";
import { createWebhook, listWebhooks } from "@/lib/webhooks/webhooks";

/** GET /api/v1/webhooks (admin): every outgoing webhook; secrets only as ••••last4. */
export const GET = personRoute("admin", async () => jsonResponse({ webhooks: await listWebhooks() }));

/**
 * POST /api/v1/webhooks (admin): {name, url, secret?, format?, events, enabled?}.
 * Without a secret one is generated: the answer's `secret` is the only time it is shown.
 */
export const POST = personRoute("admin", async ({ request, person }) =>
  jsonResponse(await createWebhook(person.username, await readJsonBody(request, z.unknown(), "webhook")), 201),
);
