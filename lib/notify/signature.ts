import "server-only";
import { createHmac, timingSafeEqual } from "node:crypto";

/** Deliveries are signed over the exact bytes of the body (docs/decisions/018-webhooks.md). */
export const SIGNATURE_HEADER = "x-baton-signature";
export const EVENT_HEADER = "x-baton-event";
export const DELIVERY_HEADER = "x-baton-delivery";

/** `sha256=<hex HMAC-SHA256 of body with secret>`; a string body is signed as its UTF-8 bytes. */
export function signBody(body: string | Uint8Array, secret: string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

/** What a receiver does: recompute over the bytes it received and compare in constant time. */
export function verifySignature(body: string | Uint8Array, secret: string, header: string | null | undefined): boolean {
  if (!header) return false;
  const expected = Buffer.from(signBody(body, secret));
  const given = Buffer.from(header.trim());
  return expected.length === given.length && timingSafeEqual(expected, given);
}
