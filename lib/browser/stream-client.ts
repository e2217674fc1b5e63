/** The browser side of the live stream, without React: reconnect delays and URLs (lib/browser/use-ledger-stream.ts). */

export const DEFAULT_STREAM_URL = "/api/v1/stream";
export const FIRST_RECONNECT_DELAY_MS = 1_000;
export const MAX_RECONNECT_DELAY_MS = 30_000;

/**
 * The wait before reconnect number `attempt` (0, 1, 2, ...): 1 s, 2 s, 4 s ...
 * up to 30 s, each with +-20 % jitter so that clients dropped together do not
 * come back together.
 */
export function reconnectDelay(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(MAX_RECONNECT_DELAY_MS, FIRST_RECONNECT_DELAY_MS * 2 ** Math.min(Math.max(attempt, 0), 30));
  return Math.round(base * (0.8 + 0.4 * random()));
}

/** `url` with `after=<seq>` set (replacing any), or unchanged when there is no seq yet. Relative URLs stay relative. */
export function streamUrl(url: string, afterSeq: number | null): string {
  if (afterSeq === null) return url;
  const parsed = new URL(url, "http://relative.invalid");
  parsed.searchParams.set("after", String(afterSeq));
  return parsed.origin === "http://relative.invalid" ? `${parsed.pathname}${parsed.search}${parsed.hash}` : parsed.toString();
}
