import type { z } from "zod";

// The ETag each answer came with, by the parsed object itself: no second copy of the data.
const etags = new WeakMap<object, string>();

/**
 * GETs JSON from Baton (same origin, the session cookie rides along, never from the
 * HTTP cache) and checks its shape: what a page shows has passed its schema.
 * `what` names it in the error a page shows ("the board could not be loaded (HTTP 503)").
 * With `held` (what the page shows for this URL, as fetched here) it asks with that answer's
 * ETag and gets `held` back on 304: an unchanged answer costs neither bytes nor a re-render.
 * The browser would revalidate on its own only answers it stored, so the header is sent by hand.
 */
export async function fetchParsed<T>(url: string, schema: z.ZodType<T>, what: string, held?: T): Promise<T> {
  const etag = typeof held === "object" && held !== null ? etags.get(held) : undefined;
  const response = await fetch(url, {
    headers: { accept: "application/json", ...(etag ? { "if-none-match": etag } : {}) },
    credentials: "same-origin",
    cache: "no-store",
  });
  if (response.status === 304 && held !== undefined) return held;
  if (!response.ok) throw new Error(`${what} could not be loaded (HTTP ${response.status})`);
  const data = schema.parse(await response.json());
  const tag = response.headers.get("etag");
  if (tag && typeof data === "object" && data !== null) etags.set(data, tag);
  return data;
}

/** `path` with the page's filters (`search`) and any `extra` parameters. */
export function withQuery(path: string, search: string, extra?: Record<string, string>): string {
  const params = new URLSearchParams(search);
  for (const [key, value] of Object.entries(extra ?? {})) params.set(key, value);
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}
