import { z } from "zod";
import { isoTime } from "../core/iso-time";
import { DELIVERY_STATUSES, NOTIFICATION_EVENTS, notificationEventSchema, webhookFormatSchema } from "./events";
import { displayNameSchema } from "../contract/display-name";

/**
 * The webhook API's request and response shapes. Free of server code: the
 * admin page checks answers with these, the server builds its answers with
 * them (lib/notify/webhooks.ts).
 */

/** Why `value` is not a URL Baton may post to, or null. Only http and https are sent. */
export function webhookUrlProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "url must be a full http:// or https:// address, e.g. https://hooks.example.com/baton";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return `url must be an http:// or https:// address; "${url.protocol}" addresses are not sent to`;
  }
  if (!url.hostname) return "url must name a host";
  // Credentials in the address would be logged with it, and fetch refuses them anyway.
  if (url.username || url.password) return "url must not carry a user name or password; put a secret in the path or use the signing secret";
  return null;
}

export const WEBHOOK_NAME_MAX = 100;
const nameSchema = displayNameSchema("name", WEBHOOK_NAME_MAX);

export const WEBHOOK_URL_MAX = 2000;
const urlSchema = z
  .string({ error: "url must be a string" })
  .trim()
  .max(WEBHOOK_URL_MAX, `url must be at most ${WEBHOOK_URL_MAX} characters`)
  .superRefine((value, context) => {
    const problem = webhookUrlProblem(value);
    if (problem) context.addIssue({ code: "custom", message: problem });
  });

export const WEBHOOK_SECRET_MIN = 16;
export const WEBHOOK_SECRET_MAX = 256;
const secretSchema = z
  .string({ error: "secret must be a string" })
  .min(WEBHOOK_SECRET_MIN, `secret must be at least ${WEBHOOK_SECRET_MIN} characters (or leave it out to have one generated)`)
  .max(WEBHOOK_SECRET_MAX, `secret must be at most ${WEBHOOK_SECRET_MAX} characters`);

const eventsSchema = z
  .array(notificationEventSchema, { error: `events must be a list of ${NOTIFICATION_EVENTS.join(", ")}` })
  .min(1, "events must name at least one event")
  .transform((events) => NOTIFICATION_EVENTS.filter((event) => events.includes(event)));

const enabledSchema = z.boolean({ error: "enabled must be true or false" });

/** POST /api/v1/webhooks. Without a secret, Baton generates one and shows it once. */
export const newWebhookSchema = z.strictObject({
  name: nameSchema,
  url: urlSchema,
  secret: secretSchema.optional(),
  format: webhookFormatSchema.default("generic"),
  events: eventsSchema,
  enabled: enabledSchema.default(true),
});
export type NewWebhook = z.infer<typeof newWebhookSchema>;

/** PATCH /api/v1/webhooks/{id}: any of the fields; a secret given here replaces the old one. */
export const webhookChangeSchema = z
  .strictObject({
    name: nameSchema.optional(),
    url: urlSchema.optional(),
    secret: secretSchema.optional(),
    format: webhookFormatSchema.optional(),
    events: eventsSchema.optional(),
    enabled: enabledSchema.optional(),
  })
  .refine((change) => Object.values(change).some((value) => value !== undefined), "send at least one of name, url, secret, format, events, enabled");
export type WebhookChange = z.infer<typeof webhookChangeSchema>;

/** A webhook as listed: never its secret, only `••••` and its last 4 characters. */
export const webhookDto = z.object({
  id: z.string(),
  name: z.string(),
  url: z.string(),
  format: webhookFormatSchema,
  events: z.array(notificationEventSchema),
  enabled: z.boolean(),
  secret_hint: z.string(),
  created_at: isoTime,
  created_by: z.string(),
});
export type WebhookDto = z.infer<typeof webhookDto>;

export const webhookListDto = z.object({ webhooks: z.array(webhookDto) });

/** POST answer: `secret` is the generated secret, the only time it is sent (null when the admin gave one). */
export const createdWebhookDto = z.object({ webhook: webhookDto, secret: z.string().nullable() });
export type CreatedWebhookDto = z.infer<typeof createdWebhookDto>;

/** One row of the delivery log. Bodies are not listed. */
export const deliveryDto = z.object({
  id: z.string(),
  webhook_id: z.string(),
  event: z.string(),
  thread_key: z.string().nullable(),
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.number().int().nonnegative(),
  /** The HTTP status of the last attempt; null when none answered (timeout, refused connection). */
  last_status: z.number().int().nullable(),
  last_error: z.string().nullable(),
  created_at: isoTime,
  /** When the next attempt is due (pending only). */
  next_attempt_at: isoTime.nullable(),
  delivered_at: isoTime.nullable(),
});
export type DeliveryDto = z.infer<typeof deliveryDto>;

/** GET /api/v1/webhooks/{id}/deliveries: newest first; `next_before` fetches the older page. */
export const deliveryPageDto = z.object({ deliveries: z.array(deliveryDto), next_before: z.string().nullable() });
export type DeliveryPageDto = z.infer<typeof deliveryPageDto>;

export const DELIVERY_PAGE_DEFAULT = 50;
export const DELIVERY_PAGE_MAX = 200;
export const deliveryPageQuerySchema = z.object({
  limit: z.coerce
    .number({ error: "limit must be a number" })
    .int("limit must be a whole number")
    .min(1, "limit must be at least 1")
    .max(DELIVERY_PAGE_MAX, `limit must be at most ${DELIVERY_PAGE_MAX}`)
    .default(DELIVERY_PAGE_DEFAULT),
  before: z.string().max(100).optional(),
});
export type DeliveryPageQuery = z.infer<typeof deliveryPageQuerySchema>;
