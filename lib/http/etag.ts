import "server-only";
import { createHash } from "node:crypto";

/**
 * Strong entity tags over the exact bytes a response serves, and the
 * If-None-Match check (RFC 9110 §8.8.3, §13.1.2).
 */

/** A strong ETag: the quoted SHA-256 hex of the bytes (a string counts as its UTF-8 bytes). */
export function computeEtag(bytes: string | Uint8Array): string {
  return `"${createHash("sha256").update(bytes).digest("hex")}"`;
}

/**
 * A weak ETag naming a state rather than bytes (`parts`: what the answer shows depends
 * on, e.g. the ledger's head): equal parts, equal tag, whatever the serialised bytes.
 */
export function stateEtag(parts: readonly unknown[]): string {
  return `W/"${createHash("sha256").update(JSON.stringify(parts)).digest("base64url").slice(0, 32)}"`;
}

/**
 * The opaque tags of an If-None-Match value (`"a"`, `W/"b"`, `"a", W/"b"`),
 * without quotes or `W/`; `*` alone is `["*"]`. Null when the value is not a
 * valid list: such a header is ignored rather than guessed at.
 */
function parseEtagList(value: string): string[] | null {
  if (value.trim() === "*") return ["*"];
  // One list element: an optional entity-tag (empty elements are allowed), then a comma or the end.
  // Scanned rather than split: an entity-tag may hold commas between its quotes.
  const element = /[\t ]*(?:(?:W\/)?"([\x21\x23-\x7e\x80-\xff]*)")?[\t ]*(,|$)/y;
  const tags: string[] = [];
  for (;;) {
    const match = element.exec(value);
    if (!match) return null;
    if (match[1] !== undefined) tags.push(match[1]);
    if (match[2] === "") return tags;
  }
}

/**
 * Whether an If-None-Match header matches `etag` (the current representation's
 * tag): the weak comparison the RFC prescribes for it, so `W/"x"` matches `"x"`,
 * and `*` matches any current representation. A missing or malformed header
 * matches nothing, so the full response is sent.
 */
export function etagMatches(ifNoneMatch: string | null | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const tags = parseEtagList(ifNoneMatch);
  if (!tags) return false;
  if (tags.length === 1 && tags[0] === "*") return true;
  const opaque = etag.replace(/^W\//, "").replace(/^"|"$/g, "");
  return tags.includes(opaque);
}

/**
 * A JSON response that revalidates: the body is serialised once, tagged with
 * the hash of those very bytes, and served with `Cache-Control: no-cache`;
 * a request whose If-None-Match matches gets 304 with the same validators and
 * no body.
 */
export function conditionalJsonResponse(request: Request, body: unknown, headers: Record<string, string> = {}): Response {
  const json = JSON.stringify(body);
  const etag = computeEtag(json);
  const common = { ...headers, etag, "cache-control": "no-cache" };
  if (etagMatches(request.headers.get("if-none-match"), etag)) {
    return new Response(null, { status: 304, headers: common });
  }
  return new Response(json, { status: 200, headers: { "content-type": "application/json; charset=utf-8", ...common } });
}
