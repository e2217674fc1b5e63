import "server-only";
import { randomBytes } from "node:crypto";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford base32, lower case

function encodeTime(ms: number): string {
  let out = "";
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

/** Time-sortable ids (`pv_01h...`): creation order is visible and indexes stay append-friendly. */
export function newId(prefix: string, atMs: number = Date.now()): string {
  const random = randomBytes(10);
  let tail = "";
  for (const byte of random) tail += ALPHABET[byte % 32];
  return `${prefix}_${encodeTime(atMs)}${tail}`;
}
