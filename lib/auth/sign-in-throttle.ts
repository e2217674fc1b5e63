import "server-only";
import { config } from "../server/config";
import { BatonError } from "../core/errors";
import { TokenBucketLimiter } from "../http/rate-limit";
import { processSlot } from "../core/singleton";

/**
 * Sign-in throttling in this process's memory: per address and username with backoff, per
 * address, per process; refused before any password is checked (docs/decisions/029-sign-in-throttling.md).
 */

export interface SignInThrottleSettings {
  /** Attempts a minute from one address, all usernames together; 0 turns it off. */
  perAddressPerMinute: number;
  /** Attempts a minute for the whole process; 0 turns it off. */
  globalPerMinute: number;
}

export const FREE_FAILURES = 5;
export const FIRST_DELAY_MS = 1_000;
export const MAX_DELAY_MS = 15 * 60_000;
/** A pair with no failure for this long (and not waiting) is forgotten. */
export const FORGET_AFTER_MS = 60 * 60_000;
/** At most this many pairs are held; past it the quiet ones go, then the oldest. */
export const MAX_PAIRS = 10_000;
/** Address buckets past this many are swept at once rather than once a minute. */
const MAX_ADDRESS_BUCKETS = 50_000;

interface PairState {
  failures: number;
  lastFailureAt: number;
  blockedUntil: number;
}

export type ThrottleLimit = "pair" | "address" | "server";

/** How long the pair waits after its `failures`-th failure in a row (0 for the free ones). */
export function delayAfter(failures: number): number {
  if (failures < FREE_FAILURES) return 0;
  const doublings = failures - FREE_FAILURES;
  return doublings >= 20 ? MAX_DELAY_MS : Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** doublings);
}

export class SignInThrottle {
  readonly settings: SignInThrottleSettings;
  private readonly now: () => number;
  private readonly pairs = new Map<string, PairState>();
  private readonly perAddress: TokenBucketLimiter;
  private readonly global: TokenBucketLimiter;

  constructor(settings: SignInThrottleSettings, now: () => number = Date.now) {
    this.settings = settings;
    this.now = now;
    this.perAddress = new TokenBucketLimiter({ perMinute: settings.perAddressPerMinute, burst: Math.max(1, settings.perAddressPerMinute) }, now);
    this.global = new TokenBucketLimiter({ perMinute: settings.globalPerMinute, burst: Math.max(1, settings.globalPerMinute) }, now);
  }

  /** Pairs held now. */
  get size(): number {
    return this.pairs.size;
  }

  /**
   * Lets one attempt by `address` for `username` go on, counting it as a failure
   * until `succeeded` says otherwise; throws 429 when one of the three limits says wait.
   */
  admit(username: string, address: string): void {
    const at = this.now();
    const key = `${address}\u0000${username}`;
    const pair = this.pairs.get(key);
    if (pair && pair.blockedUntil > at) this.refuse("pair", pair.blockedUntil - at);
    const fromAddress = this.perAddress.take(address);
    if (!fromAddress.allowed) this.refuse("address", fromAddress.retryAfterSeconds * 1000);
    if (this.perAddress.size > MAX_ADDRESS_BUCKETS) this.perAddress.sweep(at, true);
    const overall = this.global.take("*");
    if (!overall.allowed) this.refuse("server", overall.retryAfterSeconds * 1000);
    const failures = (pair?.failures ?? 0) + 1;
    // Delete and set again: the map's order is then the order of last failure (oldest first).
    this.pairs.delete(key);
    this.pairs.set(key, { failures, lastFailureAt: at, blockedUntil: at + delayAfter(failures) });
    this.bound(at);
  }

  /** The attempt admitted for this pair succeeded: its failures are forgotten. */
  succeeded(username: string, address: string): void {
    this.pairs.delete(`${address}\u0000${username}`);
  }

  private bound(at: number): void {
    if (this.pairs.size <= MAX_PAIRS) return;
    for (const [key, pair] of this.pairs) {
      if (pair.blockedUntil <= at && at - pair.lastFailureAt >= FORGET_AFTER_MS) this.pairs.delete(key);
    }
    // Still too many: the oldest go (the map is in order of last failure).
    for (const key of this.pairs.keys()) {
      if (this.pairs.size <= MAX_PAIRS) break;
      this.pairs.delete(key);
    }
  }

  private refuse(limit: ThrottleLimit, waitMs: number): never {
    const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
    const why =
      limit === "pair"
        ? "Too many failed sign-ins for this username from your address"
        : limit === "address"
          ? `Too many sign-in attempts from your address (at most ${this.settings.perAddressPerMinute} a minute)`
          : `Too many sign-in attempts on this server right now (at most ${this.settings.globalPerMinute} a minute)`;
    throw new BatonError("rate_limited", `${why}; retry in ${retryAfter} s.`, { limit, retry_after_seconds: retryAfter }, retryAfter);
  }
}

// One throttle per process (kept across Next's module reloads in development), made
// again when the settings change; tests put their own (with their own clock).
const made = processSlot<SignInThrottle>("SignInThrottle");
const put = processSlot<SignInThrottle>("SignInThrottlePut");

export function signInThrottle(): SignInThrottle {
  if (put.value) return put.value;
  const { BATON_SIGN_IN_PER_MINUTE: perAddressPerMinute, BATON_SIGN_IN_GLOBAL_PER_MINUTE: globalPerMinute } = config();
  const current = made.value;
  if (current && current.settings.perAddressPerMinute === perAddressPerMinute && current.settings.globalPerMinute === globalPerMinute) return current;
  made.value = new SignInThrottle({ perAddressPerMinute, globalPerMinute });
  return made.value;
}

/** Puts `throttle` in place of the process's whatever the settings (tests); undefined gives it back. */
export function replaceSignInThrottle(throttle: SignInThrottle | undefined): void {
  put.value = throttle;
}
