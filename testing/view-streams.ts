import { expect } from "vitest";
import { GET as streamRoute } from "../app/api/v1/stream/route";
import { openStreamCount } from "../lib/events/ledger-stream";

/** For the views' stream tests (GET /api/v1/stream?board=, ?timeline=): open streams, close them, and a refused one. */

/** GET /api/v1/stream`search` as the holder of `token`, open until `signal` aborts. */
export function openStream(token: string, search: string, signal: AbortSignal): Promise<Response> {
  return streamRoute(new Request(`http://127.0.0.1:3000/api/v1/stream${search}`, { headers: { authorization: `Bearer ${token}` }, signal }));
}

/** Aborts the streams, cancels their bodies and waits until the process holds none open. */
export async function closeStreams(abort: AbortController, streams: Response[]): Promise<void> {
  abort.abort();
  await Promise.all(streams.map((response) => response.body?.cancel().catch(() => undefined)));
  await expect.poll(() => openStreamCount()).toBe(0);
}

/** A stream refused before it opened: 400 invalid_request whose message names `field`. */
export async function expectStreamRefused(response: Response, field: string): Promise<void> {
  expect(response.status).toBe(400);
  const body = (await response.json()) as { error: { code: string; message: string } };
  expect(body.error.code).toBe("invalid_request");
  expect(body.error.message).toContain(field);
  expect(openStreamCount()).toBe(0);
}

/** `count` streams asking `search` as the holder of `token`, each answered 200. */
export async function openViewers(token: string, search: string, count: number, signal: AbortSignal): Promise<Response[]> {
  const streams = await Promise.all(Array.from({ length: count }, () => openStream(token, search, signal)));
  expect(streams.map((response) => response.status)).toEqual(streams.map(() => 200));
  return streams;
}

/** What each stream reads after `change`: every read starts first, so none misses the frame. */
export async function readAfter<T>(streams: Response[], read: (response: Response) => Promise<T>, change: () => Promise<unknown>): Promise<T[]> {
  const reading = streams.map(read);
  await change();
  return Promise.all(reading);
}
