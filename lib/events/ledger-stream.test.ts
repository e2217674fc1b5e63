import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  MAX_STREAMS_PER_READER,
  readerChecksStatus,
  RECHECK_INTERVAL_MS,
  recheckReaders,
} from "../auth/reader-checks";
import { withQuickRechecks } from "@/testing/reader-checks";
import { endSession, sessionIdOf, startSession } from "../auth/sessions";
import { createApiToken, revokeApiToken } from "../auth/tokens";
import { changeUser, createFirstAdmin, createUser } from "../auth/users";
import { inTransaction } from "../db/client";
import { ingestPacket } from "../ingest/ingest";
import { testsRunOnPostgresql } from "@/testing/postgresql";
import { useTempDatabase } from "@/testing/temp-database";
import { ledgerFeedStatus } from "./ledger-feed";
import { HEARTBEAT_INTERVAL_MS, handleStreamRequest, MAX_STREAMS_PER_PROCESS, openStreamCount } from "./ledger-stream";
import { authoriseRead as authoriseStream } from "../auth/read-access";

// With no stream left, SQLite's feed stops at once; PostgreSQL's keeps its connection a while (postgresql-feed.ts).
const FEED_RELEASED = testsRunOnPostgresql() ? { subscribers: 0 } : { subscribers: 0, running: false };

let temp: Awaited<ReturnType<typeof useTempDatabase>>;
let readToken: string;
let writeOnlyToken: string;
let admin: Awaited<ReturnType<typeof createFirstAdmin>>;
let sessionSecret: string;

beforeAll(async () => {
  temp = await useTempDatabase();
  readToken = (await createApiToken("reader", ["packets:read"])).token;
  writeOnlyToken = (await createApiToken("writer", ["packets:write"])).token;
  admin = await createFirstAdmin({ username: "stream-admin", password: "a long enough password" });
  sessionSecret = (await startSession(admin, "password")).secret;
});
afterAll(async () => {
  await temp.dispose();
});
// Every test closes what it opens.
afterEach(() => {
  expect(openStreamCount()).toBe(0);
  expect(ledgerFeedStatus()).toMatchObject(FEED_RELEASED);
  expect(readerChecksStatus()).toMatchObject({ readers: 0, streams: 0, waits: 0, checking: false });
});

const BASE = "http://127.0.0.1:3000/api/v1/stream";
const ingest = (thread: string) => ingestPacket({ thread, summary: "s", next_action: "n" }, { kind: "http", actor: "t" });

function streamRequest(headers: Record<string, string> = {}, query = "", signal?: AbortSignal): Request {
  return new Request(`${BASE}${query}`, { headers, signal });
}

const withToken = (token = readToken, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, ...extra });
const withSession = (secret = sessionSecret) => ({ cookie: `baton_session=${secret}`, "sec-fetch-site": "same-origin" });

/** A token's stream request while the process holds its limit of open streams (the count set, then put back). */
async function streamRequestAtProcessLimit(): Promise<Response> {
  const counter = (globalThis as unknown as { __batonOpenStreams: { count: number } }).__batonOpenStreams;
  counter.count = MAX_STREAMS_PER_PROCESS;
  try {
    return await handleStreamRequest(streamRequest(withToken()));
  } finally {
    counter.count = 0;
  }
}

interface Message {
  id?: string;
  event?: string;
  data?: string;
  retry?: string;
  comment?: string;
}

/** Reads server-sent events off a response body. */
function sseReader(response: Response) {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const messages: Message[] = [];
  // A read still pending when a wait timed out; the next wait takes it over rather than lose its chunk.
  let pendingRead: Promise<ReadableStreamReadResult<Uint8Array>> | null = null;
  const parse = (block: string) => {
    const message: Message = {};
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) message.comment = line.slice(1).trim();
      const match = /^(id|event|data|retry): ?(.*)$/.exec(line);
      if (match) message[match[1] as "id" | "event" | "data" | "retry"] = match[2];
    }
    messages.push(message);
  };
  /** The next chunk (parsed into `messages`): "data", "done" at the end of the body, or "timeout" after `left` ms. */
  const readChunk = async (left: number): Promise<"data" | "done" | "timeout"> => {
    pendingRead ??= reader.read();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const chunk = await Promise.race([pendingRead, new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), left)))]);
    clearTimeout(timer);
    if (chunk === null) return "timeout";
    pendingRead = null;
    if (chunk.done) return "done";
    buffer += decoder.decode(chunk.value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      parse(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
    }
    return "data";
  };
  return {
    messages,
    /** Reads until `predicate` holds for a message (returned), or fails after `timeoutMs`. */
    async until(predicate: (message: Message) => boolean, timeoutMs = 1_000): Promise<Message> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = messages.find(predicate);
        if (found) return found;
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no such message within ${timeoutMs} ms; got ${JSON.stringify(messages)}`);
        if ((await readChunk(left)) === "done") throw new Error(`stream ended; got ${JSON.stringify(messages)}`);
      }
    },
    /** Reads to the end of the body; fails if it is still open after `timeoutMs`. */
    async ended(timeoutMs: number): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`the stream was still open after ${timeoutMs} ms; got ${JSON.stringify(messages)}`);
        if ((await readChunk(left)) === "done") return;
      }
    },
    cancel: () => reader.cancel(),
  };
}

async function errorOf(response: Response) {
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  return ((await response.json()) as { error: { code: string; message: string } }).error;
}

describe("authoriseStream", () => {
  it("accepts a token with packets:read", async () => {
    await expect(authoriseStream(streamRequest(withToken()))).resolves.toMatchObject({ kind: "token", token: { name: "reader" } });
  });

  it("accepts a signed-in person's session cookie", async () => {
    await expect(authoriseStream(streamRequest(withSession()))).resolves.toEqual({ kind: "person", person: admin });
  });

  it("refuses a request with neither, even one that says Sec-Fetch-Site: same-origin", async () => {
    for (const site of [undefined, "same-origin", "cross-site", "same-site", "none"]) {
      const headers: Record<string, string> = site ? { "sec-fetch-site": site } : {};
      await expect(authoriseStream(streamRequest(headers))).rejects.toMatchObject({ code: "unauthenticated" });
    }
  });

  it("checks a token that is sent, even beside a valid session", async () => {
    await expect(
      authoriseStream(streamRequest(withToken("btn_aaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", withSession()))),
    ).rejects.toMatchObject({ code: "unauthenticated" });
    await expect(authoriseStream(streamRequest(withToken(writeOnlyToken)))).rejects.toMatchObject({ code: "forbidden" });
  });
});

describe("GET /api/v1/stream", () => {
  it("answers 401 JSON without a token or a session, 403 without the scope", async () => {
    const response = await handleStreamRequest(streamRequest());
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect((await errorOf(response)).code).toBe("unauthenticated");
    const forbidden = await handleStreamRequest(streamRequest(withToken(writeOnlyToken)));
    expect(forbidden.status).toBe(403);
    expect(openStreamCount()).toBe(0);
  });

  it("answers 400 for a malformed cursor", async () => {
    for (const query of ["?after=abc", "?after=-1", "?after=1.5", "?after=", "?after=1e3", "?after=99999999999999999"]) {
      const response = await handleStreamRequest(streamRequest(withToken(), query));
      expect(response.status, query).toBe(400);
      const error = await errorOf(response);
      expect(error.code).toBe("invalid_request");
      expect(error.message).toMatch(/after/);
    }
    const badHeader = await handleStreamRequest(streamRequest(withToken(readToken, { "last-event-id": "x1" })));
    expect(badHeader.status).toBe(400);
    expect((await errorOf(badHeader)).message).toMatch(/Last-Event-ID/);
    expect(openStreamCount()).toBe(0);
    expect(ledgerFeedStatus().subscribers).toBe(0);
  });

  it("streams retry, ready, then each ledger event as it is committed", async () => {
    const response = await handleStreamRequest(streamRequest(withToken()));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(response.headers.get("cache-control")).toBe("no-cache, no-transform");
    expect(response.headers.get("x-accel-buffering")).toBe("no");
    const sse = sseReader(response);
    const ready = await sse.until((m) => m.event === "ready");
    expect(sse.messages[0]).toEqual({ retry: "2000" });
    const head = JSON.parse(ready.data!).seq as number;
    expect(ready.id).toBe(String(head));

    await ingest("stream-live");
    const message = await sse.until((m) => m.event === "ledger" && m.data!.includes('"stream-live"'));
    const event = JSON.parse(message.data!);
    expect(event).toMatchObject({ kind: "packet_received", thread_key: "stream-live" });
    expect(message.id).toBe(String(event.seq));
    expect(event.seq).toBeGreaterThan(head);
    await sse.cancel();
    expect(openStreamCount()).toBe(0);
    expect(ledgerFeedStatus()).toMatchObject(FEED_RELEASED);
  });

  it("lets a signed-in person's page in without a token, but not a same-origin header alone", async () => {
    const response = await handleStreamRequest(streamRequest(withSession()));
    expect(response.status).toBe(200);
    const sse = sseReader(response);
    await sse.until((m) => m.event === "ready");
    await sse.cancel();

    const refused = await handleStreamRequest(streamRequest({ "sec-fetch-site": "same-origin" }));
    expect(refused.status).toBe(401);
    expect((await errorOf(refused)).code).toBe("unauthenticated");
    expect(openStreamCount()).toBe(0);
  });

  it("replays after Last-Event-ID (which wins over ?after), or after ?after", async () => {
    await ingest("replay-a");
    const first = await handleStreamRequest(streamRequest(withToken()));
    const firstSse = sseReader(first);
    const seqA = Number(JSON.parse((await firstSse.until((m) => m.event === "ready")).data!).seq);
    await firstSse.cancel();
    await ingest("replay-b");
    await ingest("replay-c");

    for (const [headers, query] of [
      [withToken(readToken, { "last-event-id": String(seqA) }), "?after=0"],
      [withToken(), `?after=${seqA}`],
    ] as const) {
      const response = await handleStreamRequest(streamRequest(headers, query));
      const sse = sseReader(response);
      await sse.until((m) => m.event === "ready");
      const replayed = sse.messages.filter((m) => m.event === "ledger").map((m) => JSON.parse(m.data!));
      expect(replayed.map((e) => e.thread_key)).toEqual(["replay-b", "replay-c"]);
      expect(replayed.map((e) => e.seq)).toEqual([seqA + 1, seqA + 2]);
      await sse.cancel();
    }
  });

  it("sends a reset for a cursor beyond this ledger", async () => {
    const response = await handleStreamRequest(streamRequest(withToken(), "?after=999999"));
    const sse = sseReader(response);
    const ready = await sse.until((m) => m.event === "ready");
    const reset = sse.messages.find((m) => m.event === "reset")!;
    expect(reset.data).toBe(ready.data);
    await sse.cancel();
  });

  it("sends a keep-alive comment every 15 s", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    try {
      const response = await handleStreamRequest(streamRequest(withToken()));
      const sse = sseReader(response);
      await sse.until((m) => m.event === "ready");
      vi.advanceTimersByTime(HEARTBEAT_INTERVAL_MS - 1);
      await expect(sse.until((m) => m.comment === "keep-alive", 50)).rejects.toThrow(/no such message/);
      vi.advanceTimersByTime(1);
      await sse.until((m) => m.comment === "keep-alive");
      await sse.cancel();
    } finally {
      vi.useRealTimers();
    }
  });

  it("cleans up when the request is aborted", async () => {
    const abort = new AbortController();
    const response = await handleStreamRequest(streamRequest(withToken(), "", abort.signal));
    expect(response.status).toBe(200);
    expect(openStreamCount()).toBe(1);
    expect(ledgerFeedStatus().subscribers).toBe(1);
    abort.abort();
    expect(openStreamCount()).toBe(0);
    expect(ledgerFeedStatus()).toMatchObject(FEED_RELEASED);
    // The body ends after what was already queued.
    const reader = response.body!.getReader();
    let done = false;
    while (!done) done = (await reader.read()).done;
  });

  it("answers 503 with Retry-After past the per-process limit", async () => {
    const response = await streamRequestAtProcessLimit();
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("5");
    expect((await errorOf(response)).code).toBe("unavailable");
    expect(ledgerFeedStatus().subscribers).toBe(0);
  });
});

/** Within this of losing its access, a reader's open stream has ended (the finding's bound). */
const CUT_OFF_MS = 5_000;

/** A stream opened with `headers`, read up to its ready event. */
async function openReady(headers: Record<string, string>) {
  const response = await handleStreamRequest(streamRequest(headers));
  expect(response.status).toBe(200);
  const sse = sseReader(response);
  await sse.until((m) => m.event === "ready");
  return sse;
}

/** Expects `sse` to end within CUT_OFF_MS, its last comment saying why (`reason`). */
async function endsWith(sse: Awaited<ReturnType<typeof openReady>>, reason: RegExp): Promise<void> {
  await sse.ended(CUT_OFF_MS);
  expect(sse.messages.at(-1)?.comment).toMatch(reason);
}

describe("GET /api/v1/stream: re-checking who reads", () => {
  it("ends a token's open stream within 5 s of its revocation, at the production interval; the reconnect gets 401", async () => {
    const { token, summary } = await createApiToken("revoked-while-streaming", ["packets:read"]);
    const sse = await openReady(withToken(token));
    const started = performance.now();
    await revokeApiToken(summary.id);
    await sse.ended(CUT_OFF_MS);
    const tookMs = performance.now() - started;
    console.log(`stream of a revoked token ended ${tookMs.toFixed(0)} ms after the revocation (checks every ${RECHECK_INTERVAL_MS} ms)`);
    expect(tookMs).toBeLessThan(CUT_OFF_MS);
    expect(sse.messages.at(-1)?.comment).toMatch(/^unauthenticated: The API token this was opened with has been revoked/);
    expect(openStreamCount()).toBe(0);

    const again = await handleStreamRequest(streamRequest(withToken(token)));
    expect(again.status).toBe(401);
    expect((await errorOf(again)).code).toBe("unauthenticated");
  });

  it("ends a session's open streams when it signs out, and only that session's", () =>
    withQuickRechecks(async () => {
      const { secret } = await startSession(admin, "password");
      const signingOut = [await openReady(withSession(secret)), await openReady(withSession(secret))];
      const staying = await openReady(withSession());
      await endSession(secret);
      for (const sse of signingOut) {
        await endsWith(sse, /^unauthenticated: Your session has ended/);
      }
      // Other readers keep theirs.
      await recheckReaders();
      expect(openStreamCount()).toBe(1);
      expect(readerChecksStatus()).toMatchObject({ readers: 1, streams: 1 });
      await staying.cancel();

      const again = await handleStreamRequest(streamRequest(withSession(secret)));
      expect(again.status).toBe(401);
    }));

  it("ends a session's open stream when the session expires, or goes idle too long", () =>
    withQuickRechecks(async () => {
      for (const data of [{ expiresAt: new Date(Date.now() - 1_000) }, { lastSeenAt: new Date(Date.now() - 8 * 24 * 3_600_000) }]) {
        const { secret } = await startSession(admin, "password");
        const sse = await openReady(withSession(secret));
        // Time passing, as the database sees it.
        await inTransaction((tx) => tx.session.update({ where: { id: sessionIdOf(secret) }, data }));
        await endsWith(sse, /^unauthenticated: Your session has ended/);
      }
    }));

  it("ends a person's open stream when an admin disables them; the reconnect gets 401", () =>
    withQuickRechecks(async () => {
      const viewer = await createUser(admin, { username: "stream-viewer", password: "a long enough password", role: "viewer" });
      const { secret } = await startSession({ id: viewer.id, username: viewer.username, role: viewer.role }, "password");
      const sse = await openReady(withSession(secret));
      await changeUser(admin, viewer.id, { disabled: true });
      await endsWith(sse, /^unauthenticated: This account has been disabled/);
      const again = await handleStreamRequest(streamRequest(withSession(secret)));
      expect(again.status).toBe(401);
    }));

  it("ends a token's open stream when it no longer has packets:read; the reconnect gets 403", () =>
    withQuickRechecks(async () => {
      const { token, summary } = await createApiToken("scope-lost-while-streaming", ["packets:read", "packets:write"]);
      const sse = await openReady(withToken(token));
      // No endpoint changes a token's scopes; a database edit stands in for one that would.
      await inTransaction((tx) => tx.apiToken.update({ where: { id: summary.id }, data: { scopes: "packets:write" } }));
      await endsWith(sse, /^forbidden: This token no longer has the scope "packets:read"/);
      const again = await handleStreamRequest(streamRequest(withToken(token)));
      expect(again.status).toBe(403);
    }));

  it(`answers 429 past ${MAX_STREAMS_PER_READER} streams of one token, before the per-process limit; another token and a session still get theirs`, async () => {
    const { token } = await createApiToken("many-streams", ["packets:read"]);
    const other = (await createApiToken("other-reader", ["packets:read"])).token;
    const streams = [];
    for (let index = 0; index < MAX_STREAMS_PER_READER; index++) streams.push(await openReady(withToken(token)));

    const refused = await handleStreamRequest(streamRequest(withToken(token)));
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("5");
    const error = await errorOf(refused);
    expect(error.code).toBe("rate_limited");
    expect(error.message).toContain(`already holds ${MAX_STREAMS_PER_READER} live streams`);
    expect(openStreamCount()).toBe(MAX_STREAMS_PER_READER);

    streams.push(await openReady(withToken(other)), await openReady(withSession()));
    // Checking them all: one statement for the tokens, one for the sessions, not one per stream.
    const before = readerChecksStatus();
    expect(before).toMatchObject({ readers: 3, streams: MAX_STREAMS_PER_READER + 2 });
    await recheckReaders();
    const after = readerChecksStatus();
    expect(after.rounds - before.rounds).toBeGreaterThanOrEqual(1);
    expect(after.lookups - before.lookups).toBe(2 * (after.rounds - before.rounds));
    expect(openStreamCount()).toBe(MAX_STREAMS_PER_READER + 2);

    // A stream that ends frees its reader's slot.
    await streams.shift()!.cancel();
    streams.push(await openReady(withToken(token)));
    for (const sse of streams) await sse.cancel();
  });

  it("holds the per-process limit for a reader under its own (503), and frees the reader's slot", async () => {
    const response = await streamRequestAtProcessLimit();
    expect(response.status).toBe(503);
    expect(readerChecksStatus()).toMatchObject({ readers: 0, streams: 0 });
  });
});
