import type { z } from "zod";

// The ETag each answer came with, by the parsed object itself: no second copy of the data.
const etags = new WeakMap<object, string>();

/**
 * Like fetchParsed, but asks with the ETag of `held` (what the page shows for this URL)
 * and gets `held` back on 304, so an unchanged answer costs neither bytes nor a re-render.
 * The page's fetches bypass the browser's HTTP cache (`no-store`: the browser would
 * revalidate on its own only for answers it stored), so the header is sent by hand.
 */
export async function fetchRevalidated<T>(url: string, schema: z.ZodType<T>, what: string, held: T | undefined): Promise<T> {
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
