import { createHash } from "node:crypto";

/**
 * Canonical JSON: object keys sorted by UTF-16 code units (JavaScript's default sort), no insignificant whitespace,
 * numbers and strings as JSON.stringify writes them. Same content => same bytes.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    const text = JSON.stringify(value);
    // undefined and functions have no JSON form; treat like JSON.stringify does in objects.
    return text === undefined ? "null" : text;
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(",")}}`;
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/**
 * The content hash of a packet: SHA-256 of the canonical JSON of the agent's
 * content, the `human` section excluded (Baton writes that; the agent does not).
 */
export function packetContentHash(received: Record<string, unknown>): string {
  const agentContent: Record<string, unknown> = {};
  for (const key of Object.keys(received)) {
    if (key !== "human") Object.defineProperty(agentContent, key, { value: received[key], enumerable: true });
  }
  return sha256Hex(canonicalJson(agentContent));
}
