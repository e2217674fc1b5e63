import "server-only";
import type { AuthenticatedToken } from "../auth/tokens";
import { config } from "../server/config";
import { BatonError } from "../core/errors";
import { processSlot } from "../core/singleton";

// Per-token rate limits: a token bucket per API token id, in this process's memory; requests are
// counted, not packets, and people are never limited (docs/decisions/021-per-token-rate-limits.md).

export interface RateLimitSettings {
  /** Requests per minute, sustained; 0 turns the limit off. */
  perMinute: number;
  /** Requests a full bucket holds, taken at once after a quiet spell. */
  burst: number;
}

export type RateDecision = { allowed: true; remaining: number } | { allowed: false; retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** How often, at most, buckets that have refilled completely are dropped. */
const SWEEP_EVERY_MS = 60_000;
const EPSILON = 1e-9;

export class TokenBucketLimiter {
  readonly settings: RateLimitSettings;
  private readonly now: () => number;
  private readonly buckets = new Map<string, Bucket>();
  private lastSweep: number;

  // Date.now is read at each call (not captured here), so that a test's fake clock reaches the process's limiter.
  constructor(settings: RateLimitSettings, now: () => number = () => Date.now()) {
    this.settings = settings;
    this.now = now;
    this.lastSweep = now();
  }

  get enabled(): boolean {
    return this.settings.perMinute > 0;
  }

  /** Refill rate in requests per millisecond. */
  private get ratePerMs(): number {
    return this.settings.perMinute / 60_000;
  }

  /** Buckets held now (a full bucket is the same as none, and is dropped by the sweep). */
  get size(): number {
    return this.buckets.size;
  }

  private level(bucket: Bucket, at: number): number {
    return Math.min(this.settings.burst, bucket.tokens + Math.max(0, at - bucket.updatedAt) * this.ratePerMs);
  }

  /** Takes one request from `key`'s bucket, or says how long until it could. */
  take(key: string): RateDecision {
    if (!this.enabled) return { allowed: true, remaining: Infinity };
    const at = this.now();
    this.sweep(at);
    const bucket = this.buckets.get(key);
    const level = bucket ? this.level(bucket, at) : this.settings.burst;
    // (The epsilon absorbs floating-point dust: 0.25 + 0.75 may come out a hair under 1.)
    if (level >= 1 - EPSILON) {
      this.buckets.set(key, { tokens: Math.max(0, level - 1), updatedAt: at });
      return { allowed: true, remaining: Math.floor(Math.max(0, level - 1) + EPSILON) };
    }
    // A refused request takes nothing and leaves its bucket as it was.
    const waitMs = (1 - level) / this.ratePerMs;
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
  }

  /** Drops the buckets that have refilled completely (bounded memory: only busy tokens hold one). */
  sweep(at = this.now(), force = false): void {
    if (!force && at - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = at;
    for (const [key, bucket] of this.buckets) {
      if (this.level(bucket, at) >= this.settings.burst - EPSILON) this.buckets.delete(key);
    }
  }
}

// One limiter per process (kept across Next's module reloads in development),
// made again when the settings change (tests call resetConfig between runs).
const shared = processSlot<TokenBucketLimiter>("RateLimiter");

function processLimiter(): TokenBucketLimiter {
  const { BATON_RATE_LIMIT_PER_MINUTE: perMinute, BATON_RATE_LIMIT_BURST: burst } = config();
  const current = shared.value;
  if (current && current.settings.perMinute === perMinute && current.settings.burst === burst) return current;
  shared.value = new TokenBucketLimiter({ perMinute, burst });
  return shared.value;
}

/**
 * Counts one request of an authenticated API token; throws 429 `rate_limited`
 * (with Retry-After) when its bucket is empty. Called by apiRoute and by
 * authoriseRead for token readers, before the request's body is read.
 */
export function admitTokenRequest(token: Pick<AuthenticatedToken, "id">): void {
  const limiter = processLimiter();
  const decision = limiter.take(token.id);
  if (decision.allowed) return;
  const { perMinute, burst } = limiter.settings;
  throw new BatonError(
    "rate_limited",
    `This token is over its rate limit of ${perMinute} requests per minute (bursts of up to ${burst}); ` +
      `retry in ${decision.retryAfterSeconds} s. The limit is set by BATON_RATE_LIMIT_PER_MINUTE and BATON_RATE_LIMIT_BURST.`,
    { limit_per_minute: perMinute, burst, retry_after_seconds: decision.retryAfterSeconds },
    decision.retryAfterSeconds,
  );
}
