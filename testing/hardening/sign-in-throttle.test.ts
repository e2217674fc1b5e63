import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import * as session from "@/app/api/v1/session/route";
import { FREE_FAILURES, MAX_DELAY_MS, replaceSignInThrottle, SignInThrottle, type SignInThrottleSettings } from "../../lib/auth/sign-in-throttle";
import type { Person } from "../../lib/auth/roles";
import { createFirstAdmin, createUser } from "../../lib/auth/users";
import { config } from "../../lib/server/config";
import { CLIENT_ADDRESS_HEADER } from "../../lib/http/client-address";
import { freshDatabaseForThisFile } from "@/testing/temp-database";

/**
 * Sign-in throttling (hardening round 2; decision 029), through the real
 * POST /api/v1/session handler against a temporary database, with a clock the
 * tests move by hand: failures from one address hold back only that address for
 * that username (nobody can lock another person out from elsewhere), with a
 * doubling wait; one address across usernames, and the whole process, have a
 * ceiling; refused attempts cost no Argon2 work; nothing tells which usernames exist.
 */

// Counts the password checks the sign-in makes (the real ones run).
const checks = vi.hoisted(() => ({ count: 0 }));
vi.mock("../../lib/auth/passwords", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../lib/auth/passwords")>();
  return {
    ...original,
    verifyPassword: (hash: string, password: string) => {
      checks.count++;
      return original.verifyPassword(hash, password);
    },
    verifyAgainstDecoy: (password: string) => {
      checks.count++;
      return original.verifyAgainstDecoy(password);
    },
  };
});

freshDatabaseForThisFile();

const ORIGIN = "http://baton.test";
const PASSWORD = "the admin's long password";
const DEFAULTS: SignInThrottleSettings = { perAddressPerMinute: 30, globalPerMinute: 300 };

let now = 1_000_000;
const clock = { now: () => now, advance: (ms: number) => (now += ms) };
let serial = 0;
/** An address no other test uses. */
const newAddress = () => `198.51.100.${++serial}`;

let admin: Person;
let adminName = "";

beforeAll(async () => {
  admin = await createFirstAdmin({ username: "the-admin", password: PASSWORD });
  adminName = admin.username;
});
beforeEach(() => replaceSignInThrottle(new SignInThrottle(DEFAULTS, clock.now)));
afterAll(() => replaceSignInThrottle(undefined));

interface Answer {
  status: number;
  code: string | null;
  message: string | null;
  limit: string | null;
  retryAfter: number | null;
  cookie: boolean;
}

async function signInFrom(address: string, username: string, password: string, headers: Record<string, string> = {}): Promise<Answer> {
  const request = new Request(`${ORIGIN}/api/v1/session`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: ORIGIN, host: "baton.test", [CLIENT_ADDRESS_HEADER]: address, ...headers },
    body: JSON.stringify({ username, password }),
  });
  const response = await session.POST(request);
  const body = (await response.json()) as { error?: { code: string; message: string; details: { limit?: string } | null } };
  const retryAfter = response.headers.get("retry-after");
  return {
    status: response.status,
    code: body.error?.code ?? null,
    message: body.error?.message ?? null,
    limit: body.error?.details?.limit ?? null,
    retryAfter: retryAfter === null ? null : Number(retryAfter),
    cookie: (response.headers.get("set-cookie") ?? "").startsWith("baton_session="),
  };
}

const wrong = (index = 0) => `not the password ${index}`;

describe("sign-in throttled per address and username", () => {
  it("five wrong passwords for the admin from address A hold back A (429, Retry-After, no password checked); the right one from B signs in", async () => {
    const attacker = newAddress();
    const admin = newAddress();
    for (let attempt = 0; attempt < FREE_FAILURES; attempt++) {
      expect(await signInFrom(attacker, adminName, wrong(attempt))).toMatchObject({ status: 401, code: "unauthenticated" });
    }
    const before = checks.count;
    for (const password of [wrong(9), PASSWORD]) {
      const refused = await signInFrom(attacker, adminName, password);
      expect(refused).toMatchObject({ status: 429, code: "rate_limited", limit: "pair", retryAfter: 1, cookie: false });
      expect(refused.message).toBe("Too many failed sign-ins for this username from your address; retry in 1 s.");
    }
    expect(checks.count, "a held-back attempt checks no password").toBe(before);
    // The admin, from elsewhere, is not locked out, however often A keeps trying.
    expect(await signInFrom(admin, adminName, PASSWORD)).toMatchObject({ status: 200, code: null, cookie: true });
    expect(await signInFrom(attacker, adminName, PASSWORD)).toMatchObject({ status: 429, limit: "pair" });
    expect(await signInFrom(admin, adminName.toUpperCase(), PASSWORD)).toMatchObject({ status: 200, cookie: true });
  });

  it("a client cannot pass for another address with X-Forwarded-For (no proxy configured)", async () => {
    expect(config().BATON_TRUSTED_PROXY_HOPS).toBe(0);
    const attacker = newAddress();
    const victim = newAddress();
    for (let attempt = 0; attempt <= FREE_FAILURES; attempt++) await signInFrom(attacker, adminName, wrong(attempt), { "x-forwarded-for": victim });
    expect(await signInFrom(attacker, adminName, PASSWORD, { "x-forwarded-for": newAddress() })).toMatchObject({ status: 429, limit: "pair" });
    expect(await signInFrom(victim, adminName, PASSWORD)).toMatchObject({ status: 200, cookie: true });
  });

  it("the wait doubles from 1 s up to 15 minutes; waiting Retry-After is enough; a success starts again from nothing", async () => {
    const address = newAddress();
    for (let attempt = 0; attempt < FREE_FAILURES - 1; attempt++) await signInFrom(address, adminName, wrong(attempt));
    const waits: number[] = [];
    for (let round = 0; round < 13; round++) {
      expect(await signInFrom(address, adminName, wrong(round))).toMatchObject({ status: 401 });
      const refused = await signInFrom(address, adminName, wrong(round));
      expect(refused).toMatchObject({ status: 429, limit: "pair" });
      waits.push(refused.retryAfter!);
      clock.advance(refused.retryAfter! * 1000 - 1);
      expect(await signInFrom(address, adminName, wrong(round)), "one millisecond early").toMatchObject({ status: 429 });
      clock.advance(1);
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900, 900]);
    expect(MAX_DELAY_MS).toBe(900_000);
    expect(await signInFrom(address, adminName, PASSWORD)).toMatchObject({ status: 200, cookie: true });
    for (let attempt = 0; attempt < FREE_FAILURES; attempt++) expect(await signInFrom(address, adminName, wrong(attempt))).toMatchObject({ status: 401 });
    expect(await signInFrom(address, adminName, wrong())).toMatchObject({ status: 429, retryAfter: 1 });
  });

  it("no answer tells an existing username from an unknown one", async () => {
    const existing = (await createUser(admin, { username: "someone-real", password: PASSWORD, role: "viewer" })).username;
    const sequence = async (username: string) => {
      const address = newAddress();
      const answers: Omit<Answer, "message">[] = [];
      const messages: (string | null)[] = [];
      for (let attempt = 0; attempt < FREE_FAILURES + 2; attempt++) {
        const { message, ...rest } = await signInFrom(address, username, wrong(attempt));
        answers.push(rest);
        messages.push(message);
      }
      clock.advance(1_000);
      const { message, ...rest } = await signInFrom(address, username, wrong());
      answers.push(rest);
      messages.push(message);
      return { answers, messages };
    };
    const known = await sequence(existing);
    const unknown = await sequence("nobody-of-that-name");
    expect(unknown).toEqual(known);
    expect(known.answers.map((answer) => answer.status)).toEqual([401, 401, 401, 401, 401, 429, 429, 401]);
  });
});

describe("sign-in throttled per address across usernames, and per process", () => {
  it("one address sending 480 sign-ins in 10 s across usernames has 30 (+ what refills) checked; the rest are 429 with Retry-After; another address goes on", async () => {
    const flood = newAddress();
    const before = checks.count;
    const statuses = new Map<number, number>();
    let firstRefusal: Answer | null = null;
    for (let index = 0; index < 480; index++) {
      const answer = await signInFrom(flood, `user-${index}`, wrong(index));
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      if (answer.status === 429) {
        firstRefusal ??= answer;
        expect(answer.retryAfter).toBeGreaterThanOrEqual(1);
      }
      clock.advance(10_000 / 480);
    }
    // 30 at once, then one every 2 s: 5 more in 10 s.
    expect(statuses.get(401)).toBeGreaterThanOrEqual(34);
    expect(statuses.get(401)).toBeLessThanOrEqual(35);
    expect(statuses.get(429)).toBe(480 - statuses.get(401)!);
    expect(checks.count - before, "refused attempts check no password").toBe(statuses.get(401));
    expect(firstRefusal).toMatchObject({ code: "rate_limited", limit: "address", retryAfter: 2 });
    expect(firstRefusal!.message).toBe("Too many sign-in attempts from your address (at most 30 a minute); retry in 2 s.");
    expect(await signInFrom(newAddress(), adminName, PASSWORD)).toMatchObject({ status: 200 });
  });

  it("the whole process takes at most its ceiling a minute from all addresses together", async () => {
    expect([config().BATON_SIGN_IN_PER_MINUTE, config().BATON_SIGN_IN_GLOBAL_PER_MINUTE]).toEqual([30, 300]);
    // A small ceiling (12 a minute: one every 5 s) so that the test checks few passwords.
    replaceSignInThrottle(new SignInThrottle({ perAddressPerMinute: 30, globalPerMinute: 12 }, clock.now));
    for (let index = 0; index < 12; index++) expect(await signInFrom(newAddress(), `spread-${index}`, wrong(index))).toMatchObject({ status: 401 });
    const before = checks.count;
    const refused = await signInFrom(newAddress(), adminName, PASSWORD);
    expect(refused).toMatchObject({ status: 429, code: "rate_limited", limit: "server", retryAfter: 5, cookie: false });
    expect(refused.message).toBe("Too many sign-in attempts on this server right now (at most 12 a minute); retry in 5 s.");
    expect(checks.count).toBe(before);
    clock.advance(5_000);
    expect(await signInFrom(newAddress(), adminName, PASSWORD)).toMatchObject({ status: 200, cookie: true });
  });
});
