import type { z } from "zod";

/**
 * GETs JSON from Baton (same origin, the session cookie rides along, never from the
 * HTTP cache) and checks its shape: what a page shows has passed its schema.
 * `what` names it in the error a page shows ("the board could not be loaded (HTTP 503)").
 */
export async function fetchParsed<T>(url: string, schema: z.ZodType<T>, what: string): Promise<T> {
  const response = await fetch(url, { headers: { accept: "application/json" }, credentials: "same-origin", cache: "no-store" });
  if (!response.ok) throw new Error(`${what} could not be loaded (HTTP ${response.status})`);
  return schema.parse(await response.json());
}

/** `path` with the page's filters (`search`) and any `extra` parameters. */
export function withQuery(path: string, search: string, extra?: Record<string, string>): string {
  const params = new URLSearchParams(search);
  for (const [key, value] of Object.entries(extra ?? {})) params.set(key, value);
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}
