import { afterAll, describe, expect, it, onTestFinished, vi } from "vitest";
import * as threads from "@/app/api/v1/threads/route";
import { createApiToken } from "../../lib/auth/tokens";
import { startSession } from "../../lib/auth/sessions";
import { createFirstAdmin } from "../../lib/auth/users";
import { resetConfig } from "../../lib/server/config";
import { TokenBucketLimiter } from "../../lib/http/rate-limit";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { recordFigure } from "@/testing/reliability";
import { createWriteToken, errorCodeOf, packetRequest, send } from "@/testing/hardening/ingest-harness";

/**
 * Overload, per-token rate limits (issue 8, item 3; decision 021), through the
 * real POST /api/v1/packets handler with real tokens against a temporary
 * database: the request past the burst is 429 with Retry-After, stores nothing,
 * takes no arrival ticket and leaves its body unread; another token goes on as
 * before; waiting the Retry-After it gave is enough. A batch counts as one
 * request. Token readers are limited alike; people never are.
 */

// Counts the arrival tickets the route takes (the real writer does the rest).
const arrivals = vi.hoisted(() => ({ count: 0 }));
vi.mock("../../lib/ingest/batch-writer", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../lib/ingest/batch-writer")>();
  return {
    ...original,
    announceArrival: () => {
      arrivals.count++;
      return original.announceArrival();
    },
  };
});

// One request every 3 seconds, bursts of 5; set before the database (and config) of this file.
const PER_MINUTE = 20;
const BURST = 5;
const saved = { perMinute: process.env.BATON_RATE_LIMIT_PER_MINUTE, burst: process.env.BATON_RATE_LIMIT_BURST };
process.env.BATON_RATE_LIMIT_PER_MINUTE = String(PER_MINUTE);
process.env.BATON_RATE_LIMIT_BURST = String(BURST);
resetConfig();
afterAll(() => {
  if (saved.perMinute === undefined) delete process.env.BATON_RATE_LIMIT_PER_MINUTE;
  else process.env.BATON_RATE_LIMIT_PER_MINUTE = saved.perMinute;
  if (saved.burst === undefined) delete process.env.BATON_RATE_LIMIT_BURST;
  else process.env.BATON_RATE_LIMIT_BURST = saved.burst;
  resetConfig();
});

freshDatabaseForThisFile();

const SECTION = "rate-limit";
const ORIGIN = "http://baton.test";
const segment = { params: Promise.resolve({}) as Promise<Record<string, never>> };
let sequence = 0;

const packet = (tag: string) =>
  JSON.stringify({ thread: `rate-limit/${tag}`, summary: `rate limit ${tag} ${++sequence}`, next_action: "continue" });

/** A body that notes whether anyone began to read it. */
function watchedBody(text: string): { stream: ReadableStream<Uint8Array>; read: () => boolean } {
  let pulled = false;
  const bytes = new TextEncoder().encode(text);
  // highWaterMark 0: nothing is pulled until somebody reads.
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        pulled = true;
        controller.enqueue(bytes);
        controller.close();
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, read: () => pulled };
}

describe("per-token rate limits on POST /api/v1/packets", () => {
  it("refuses the request past the burst with 429 and Retry-After, before it takes a ticket or reads its body; waiting Retry-After is enough", async () => {
    // The limiter's clock is Date: faked (and still) for this test, so the bucket refills
    // only when the test moves the clock, and waiting Retry-After costs no real time.
    vi.useFakeTimers({ toFake: ["Date"] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const token = await createWriteToken("limited");
    const other = await createWriteToken("neighbour");

    for (let i = 0; i < BURST; i++) {
      const sent = await send(packetRequest(token, packet("burst")));
      expect(sent.status, JSON.stringify(sent.json)).toBe(201);
      expect(sent.added.versions).toBe(1);
    }

    const body = watchedBody(packet("refused"));
    const ticketsBefore = arrivals.count;
    const refused = await send(packetRequest(token, body.stream));
    expect([refused.status, errorCodeOf(refused.json)]).toEqual([429, "rate_limited"]);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil(60 / PER_MINUTE));
    expect(refused.json).toMatchObject({
      error: { details: { limit_per_minute: PER_MINUTE, burst: BURST, retry_after_seconds: retryAfter } },
    });
    const message = (refused.json as { error: { message: string } }).error.message;
    expect(message).toContain(`${PER_MINUTE} requests per minute`);
    expect(message).toContain("BATON_RATE_LIMIT_PER_MINUTE");
    expect(refused.added).toEqual({ versions: 0, threads: 0, events: 0 });
    expect(arrivals.count).toBe(ticketsBefore);
    expect(body.read()).toBe(false);

    // Another token is not affected.
    const neighbour = await send(packetRequest(other, packet("neighbour")));
    expect(neighbour.status).toBe(201);
    expect(neighbour.added.versions).toBe(1);

    // Still refused until the time is up (to the millisecond: nothing refilled while the clock stood); then taken again.
    expect(retryAfter).toBe(Math.ceil(60 / PER_MINUTE));
    expect((await send(packetRequest(token, packet("still refused")))).status).toBe(429);
    const refusedAt = Date.now();
    vi.advanceTimersByTime(retryAfter * 1000 - 1);
    expect((await send(packetRequest(token, packet("a millisecond early")))).status).toBe(429);
    vi.advanceTimersByTime(1);
    const again = await send(packetRequest(token, packet("after retry-after")));
    expect(again.status, JSON.stringify(again.json)).toBe(201);
    expect(again.added.versions).toBe(1);

    recordFigure(SECTION, "settings under test", `${PER_MINUTE}/min, burst ${BURST}`, "set with BATON_RATE_LIMIT_PER_MINUTE and BATON_RATE_LIMIT_BURST");
    recordFigure(SECTION, "requests taken before the first 429", BURST, "the burst, from a full bucket");
    recordFigure(SECTION, "Retry-After of the first 429 (s)", retryAfter, "whole seconds until a request is available, at least 1");
    recordFigure(SECTION, "stored by refused requests", refused.added.versions, "must be 0; no arrival ticket taken, body left unread");
    recordFigure(SECTION, "another token's request while the first was refused", neighbour.status, "buckets are per token");
    recordFigure(SECTION, "waited before the next request was taken (ms)", Date.now() - refusedAt, "the Retry-After given, on the limiter's clock (moved by the test)");
  });

  it("counts a batch as one request, whatever number of packets it carries", async () => {
    const token = await createWriteToken("batches");
    const batch = JSON.stringify({ packets: Array.from({ length: 20 }, (_, i) => JSON.parse(packet(`batch-${i}`))) });
    const first = await send(packetRequest(token, batch));
    expect(first.status).toBe(207);
    expect(first.added.versions).toBe(20);
    for (let i = 1; i < BURST; i++) expect((await send(packetRequest(token, packet("after batch")))).status).toBe(201);
    expect((await send(packetRequest(token, packet("past burst")))).status).toBe(429);
    recordFigure(SECTION, "requests taken after a batch of 20 packets", BURST - 1, "a batch counts as one request (at most 100 packets)");
  });

  it("does not count requests whose token is refused", async () => {
    const token = await createWriteToken("bad secrets");
    const wrongSecret = `${token.slice(0, -4)}${token.endsWith("AAAA") ? "BBBB" : "AAAA"}`;
    for (let i = 0; i < BURST * 3; i++) expect((await send(packetRequest(wrongSecret, packet("wrong secret")))).status).toBe(401);
    expect((await send(packetRequest(token, packet("right secret")))).status).toBe(201);
  });
});

describe("per-token rate limits on reads", () => {
  const listThreads = (headers: Record<string, string>) => threads.GET(new Request(`${ORIGIN}/api/v1/threads`, { headers }), segment);

  it("limits a token reader alike, and never a signed-in person", async () => {
    const reader = (await createApiToken("reader", ["packets:read"])).token;
    for (let i = 0; i < BURST; i++) expect((await listThreads({ authorization: `Bearer ${reader}` })).status).toBe(200);
    const refused = await listThreads({ authorization: `Bearer ${reader}` });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);

    const admin = await createFirstAdmin({ username: "ratelimit-admin", password: "a long enough password 1" });
    const { secret } = await startSession(admin, "password");
    const statuses = new Set<number>();
    for (let i = 0; i < BURST * 4; i++) statuses.add((await listThreads({ cookie: `baton_session=${secret}` })).status);
    expect([...statuses]).toEqual([200]);
    recordFigure(SECTION, "reads by a signed-in person, back to back", BURST * 4, "all 200: people are never rate-limited");
  });
});

describe("the defaults under a flood (simulated clock)", () => {
  it("a token sending 100 requests a second for 60 s gets the burst, then 10 a second", () => {
    let now = 0;
    const limiter = new TokenBucketLimiter({ perMinute: 600, burst: 120 }, () => now);
    let taken = 0;
    let longestRetryAfter = 0;
    for (let i = 0; i < 6_000; i++) {
      const decision = limiter.take("tok_flood");
      if (decision.allowed) taken++;
      else longestRetryAfter = Math.max(longestRetryAfter, decision.retryAfterSeconds);
      now += 10;
    }
    expect(taken).toBeGreaterThanOrEqual(719);
    expect(taken).toBeLessThanOrEqual(720);
    expect(longestRetryAfter).toBe(1);
    recordFigure(SECTION, "defaults: taken of 6,000 requests sent at 100/s for 60 s", taken, "600/min, burst 120: the burst plus 10 a second (simulated clock)");
    recordFigure(SECTION, "defaults: longest Retry-After during that flood (s)", longestRetryAfter);
  });
});
