import { afterEach, describe, expect, it } from "vitest";
import { resetConfig } from "../server/config";
import { BatonError } from "../core/errors";
import { errorResponse } from "./respond";
import { admitTokenRequest, TokenBucketLimiter } from "./rate-limit";

/** A clock the test moves by hand. */
function manualClock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

function takeAll(limiter: TokenBucketLimiter, key: string, count: number): number {
  let allowed = 0;
  for (let i = 0; i < count; i++) if (limiter.take(key).allowed) allowed++;
  return allowed;
}

describe("the token bucket", () => {
  it("takes a full burst at once, then refuses", () => {
    const clock = manualClock();
    const limiter = new TokenBucketLimiter({ perMinute: 600, burst: 120 }, clock.now);
    expect(takeAll(limiter, "tok_a", 120)).toBe(120);
    const refused = limiter.take("tok_a");
    expect(refused).toEqual({ allowed: false, retryAfterSeconds: 1 });
  });

  it("refills at perMinute / 60 per second, never past the burst", () => {
    const clock = manualClock();
    const limiter = new TokenBucketLimiter({ perMinute: 600, burst: 120 }, clock.now);
    takeAll(limiter, "tok_a", 120);
    clock.advance(999);
    // 9.99 requests refilled: 9 whole ones.
    expect(takeAll(limiter, "tok_a", 20)).toBe(9);
    clock.advance(60 * 60_000);
    expect(takeAll(limiter, "tok_a", 200)).toBe(120);
  });

  it("sustains exactly the configured rate under a flood", () => {
    const clock = manualClock();
    const limiter = new TokenBucketLimiter({ perMinute: 600, burst: 120 }, clock.now);
    // 100 requests a second for 60 seconds: the burst, then 10 a second.
    let allowed = 0;
    for (let i = 0; i < 6_000; i++) {
      if (limiter.take("tok_a").allowed) allowed++;
      clock.advance(10);
    }
    expect(allowed).toBeGreaterThanOrEqual(120 + 599);
    expect(allowed).toBeLessThanOrEqual(120 + 600);
  });

  it("says in Retry-After the whole seconds until a request is available, at least 1", () => {
    const clock = manualClock();
    // One request every 10 seconds.
    const limiter = new TokenBucketLimiter({ perMinute: 6, burst: 2 }, clock.now);
    expect(takeAll(limiter, "tok_a", 2)).toBe(2);
    expect(limiter.take("tok_a")).toEqual({ allowed: false, retryAfterSeconds: 10 });
    clock.advance(2_500);
    expect(limiter.take("tok_a")).toEqual({ allowed: false, retryAfterSeconds: 8 });
    clock.advance(7_400);
    // 0.1 s left: rounded up to 1, never 0.
    expect(limiter.take("tok_a")).toEqual({ allowed: false, retryAfterSeconds: 1 });
    clock.advance(100);
    expect(limiter.take("tok_a").allowed).toBe(true);
  });

  it("waiting the Retry-After it gave is always enough", () => {
    const clock = manualClock();
    const limiter = new TokenBucketLimiter({ perMinute: 7, burst: 3 }, clock.now);
    for (let round = 0; round < 50; round++) {
      let decision = limiter.take("tok_a");
      while (decision.allowed) decision = limiter.take("tok_a");
      clock.advance(decision.retryAfterSeconds * 1000);
      expect(limiter.take("tok_a").allowed).toBe(true);
      clock.advance(round * 37);
    }
  });

  it("keeps one bucket per token: one token's flood leaves another's alone", () => {
    const clock = manualClock();
    const limiter = new TokenBucketLimiter({ perMinute: 60, burst: 5 }, clock.now);
    expect(takeAll(limiter, "tok_a", 50)).toBe(5);
    expect(takeAll(limiter, "tok_b", 5)).toBe(5);
  });

  it("drops the buckets of idle tokens once they have refilled", () => {
    const clock = manualClock();
    const limiter = new TokenBucketLimiter({ perMinute: 600, burst: 120 }, clock.now);
    for (let i = 0; i < 1_000; i++) limiter.take(`tok_${i}`);
    expect(limiter.size).toBe(1_000);
    // A bucket that took one request is full again after 0.1 s; the sweep runs at most once a minute.
    clock.advance(61_000);
    limiter.take("tok_busy");
    expect(limiter.size).toBe(1);
    // A bucket still refilling is kept.
    takeAll(limiter, "tok_busy", 120);
    clock.advance(5_000);
    limiter.sweep(clock.now(), true);
    expect(limiter.size).toBe(1);
    clock.advance(60_000);
    limiter.sweep(clock.now(), true);
    expect(limiter.size).toBe(0);
  });

  it("is off at 0 requests per minute", () => {
    const limiter = new TokenBucketLimiter({ perMinute: 0, burst: 1 });
    expect(takeAll(limiter, "tok_a", 10_000)).toBe(10_000);
    expect(limiter.size).toBe(0);
  });
});

describe("admitTokenRequest", () => {
  const saved = { perMinute: process.env.BATON_RATE_LIMIT_PER_MINUTE, burst: process.env.BATON_RATE_LIMIT_BURST };
  afterEach(() => {
    for (const [name, value] of [
      ["BATON_RATE_LIMIT_PER_MINUTE", saved.perMinute],
      ["BATON_RATE_LIMIT_BURST", saved.burst],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    resetConfig();
  });

  function useSettings(perMinute: string | undefined, burst: string | undefined) {
    if (perMinute === undefined) delete process.env.BATON_RATE_LIMIT_PER_MINUTE;
    else process.env.BATON_RATE_LIMIT_PER_MINUTE = perMinute;
    if (burst === undefined) delete process.env.BATON_RATE_LIMIT_BURST;
    else process.env.BATON_RATE_LIMIT_BURST = burst;
    resetConfig();
  }

  function refusal(id: string): BatonError {
    try {
      admitTokenRequest({ id });
    } catch (error) {
      if (error instanceof BatonError) return error;
      throw error;
    }
    throw new Error("expected a refusal");
  }

  it("defaults to 600 a minute with bursts of 120, and answers 429 naming the limit and its settings", async () => {
    useSettings(undefined, undefined);
    const id = `tok_default_${Date.now()}`;
    for (let i = 0; i < 120; i++) admitTokenRequest({ id });
    const error = refusal(id);
    expect(error.code).toBe("rate_limited");
    expect(error.retryAfterSeconds).toBe(1);
    expect(error.message).toContain("600 requests per minute");
    expect(error.message).toContain("120");
    expect(error.message).toContain("BATON_RATE_LIMIT_PER_MINUTE");
    expect(error.message).toContain("BATON_RATE_LIMIT_BURST");
    const response = errorResponse(error);
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("1");
    expect(await response.json()).toMatchObject({
      error: { code: "rate_limited", details: { limit_per_minute: 600, burst: 120, retry_after_seconds: 1 } },
    });
  });

  it("follows the settings, and lets everything through at 0", () => {
    useSettings("6", "2");
    admitTokenRequest({ id: "tok_small" });
    admitTokenRequest({ id: "tok_small" });
    expect(refusal("tok_small").retryAfterSeconds).toBe(10);

    useSettings("0", undefined);
    for (let i = 0; i < 5_000; i++) admitTokenRequest({ id: "tok_small" });
  });

  it("refuses a burst of 0 with a message naming the setting", () => {
    useSettings("600", "0");
    expect(() => admitTokenRequest({ id: "tok_x" })).toThrow(/BATON_RATE_LIMIT_BURST must be at least 1/);
  });
});
