import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { database, inTransaction } from "../db/client";
import { expectBatonError } from "@/testing/expect-baton-error";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import type { Person, Role } from "./roles";
import { replaceSignInThrottle, SignInThrottle } from "./sign-in-throttle";
import {
  clearedSessionCookie,
  endSession,
  personOfSession,
  SESSION_COOKIE,
  SESSION_IDLE_MS,
  SESSION_MAX_MS,
  sessionCookie,
  signIn,
  startSession,
} from "./sessions";
import { changeUser, createFirstAdmin, createUser } from "./users";

freshDatabaseForThisFile();

const PASSWORD = "a long enough password";
const MINUTE = 60_000;
const DAY = 24 * 3_600_000;
/** Where these sign-ins come from unless a test says otherwise. */
const FROM = "198.51.100.7";
const ELSEWHERE = "203.0.113.9";
let admin: Person;
let serial = 0;

beforeAll(async () => {
  // A throttle of this file's own, with the per-address and per-process buckets off:
  // this file signs in more than 30 times a minute from one address on purpose. Those
  // buckets are tested in testing/hardening/sign-in-throttle.test.ts.
  // Its clock stands still: a backoff must not run out while a slow machine hashes the guesses.
  const frozen = Date.now();
  replaceSignInThrottle(new SignInThrottle({ perAddressPerMinute: 0, globalPerMinute: 0 }, () => frozen));
  admin = await createFirstAdmin({ username: "root-admin", password: PASSWORD });
});
afterAll(() => replaceSignInThrottle(undefined));

/** A new person with the test password; a fresh username so the throttle knows nothing of it. */
async function newPerson(role: Role = "viewer"): Promise<Person> {
  const user = await createUser(admin, { username: `person-${++serial}`, password: PASSWORD, role });
  return { id: user.id, username: user.username, role: user.role };
}

const sessionIdOf = (secret: string) => createHash("sha256").update(secret).digest("hex");
const sessionRow = async (secret: string) => (await database()).session.findUnique({ where: { id: sessionIdOf(secret) } });

/** Changes a stored session the way time (or another process) would; writes go through inTransaction. */
async function alterSession(secret: string, data: { lastSeenAt?: Date; expiresAt?: Date; endedAt?: Date }) {
  await inTransaction((tx) => tx.session.update({ where: { id: sessionIdOf(secret) }, data }));
}

async function eventsAbout(userId: string, kinds: string[]) {
  const rows = await (await database()).ledgerEvent.findMany({ where: { kind: { in: kinds } }, orderBy: { seq: "asc" } });
  return rows
    .map((row) => ({ kind: row.kind, actor: row.actor, data: JSON.parse(row.data) as Record<string, unknown> }))
    .filter((event) => event.data.user_id === userId);
}

const failSignIn = (username: string, password = "not the password at all") =>
  expectBatonError(signIn({ username, password }, FROM), "unauthenticated");

describe("signIn", () => {
  it("starts a session for the right password", async () => {
    const person = await newPerson("operator");
    const before = Date.now();
    const session = await signIn({ username: person.username, password: PASSWORD }, FROM);
    expect(session.person).toEqual(person);
    expect(session.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(session.expiresAt.getTime()).toBeGreaterThanOrEqual(before + SESSION_MAX_MS);
    expect(session.expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + SESSION_MAX_MS);
    expect(await personOfSession(session.secret)).toEqual(person);
    expect(await eventsAbout(person.id, ["signed_in"])).toEqual([
      { kind: "signed_in", actor: person.username, data: { user_id: person.id, how: "password" } },
    ]);
  });

  it("refuses a wrong password, an unknown user and non-strings alike (401), starting nothing", async () => {
    const person = await newPerson();
    const sessions = await (await database()).session.count();
    const wrong = await failSignIn(person.username);
    const unknown = await failSignIn("nobody-here", PASSWORD);
    const garbage = await expectBatonError(signIn({ username: 42, password: { password: PASSWORD } }, FROM), "unauthenticated");
    for (const error of [wrong, unknown, garbage]) {
      expect(error.status).toBe(401);
      expect(error.message).toBe("Wrong username or password.");
    }
    expect(await (await database()).session.count()).toBe(sessions);
    expect(await eventsAbout(person.id, ["signed_in"])).toEqual([]);
  });

  it("matches the username whatever its case and surrounding spaces", async () => {
    const person = await newPerson();
    const session = await signIn({ username: `  ${person.username.toUpperCase()}\t`, password: PASSWORD }, FROM);
    expect(session.person).toEqual(person);
  });

  it("refuses a disabled account even with the right password", async () => {
    const person = await newPerson();
    await changeUser(admin, person.id, { disabled: true });
    await failSignIn(person.username, PASSWORD);
  });

  it("hands out a new secret, and a new stored session, on every sign-in", async () => {
    const person = await newPerson();
    const first = await signIn({ username: person.username, password: PASSWORD }, FROM);
    const second = await signIn({ username: person.username, password: PASSWORD }, FROM);
    expect(second.secret).not.toBe(first.secret);
    expect(await (await database()).session.count({ where: { userId: person.id } })).toBe(2);
    expect(await personOfSession(first.secret)).toEqual(person);
    expect(await personOfSession(second.secret)).toEqual(person);
  });

  it("after 5 failures from one address, holds back that address for that username (429 with Retry-After), even with the right password; nobody else", async () => {
    const person = await newPerson();
    for (let attempt = 1; attempt <= 5; attempt++) await failSignIn(person.username);
    for (const password of ["still wrong password", PASSWORD]) {
      const error = await expectBatonError(signIn({ username: person.username, password }, FROM), "rate_limited");
      expect(error.status).toBe(429);
      expect(error.retryAfterSeconds).toBeGreaterThan(0);
      expect(error.retryAfterSeconds).toBeLessThanOrEqual(15 * 60);
    }
    // Counted per username case-insensitively...
    await expectBatonError(signIn({ username: person.username.toUpperCase(), password: PASSWORD }, FROM), "rate_limited");
    expect(await eventsAbout(person.id, ["signed_in"])).toEqual([]);
    // ...but only for that address: the person signs in from elsewhere (no account lock),
    const elsewhere = await signIn({ username: person.username, password: PASSWORD }, ELSEWHERE);
    expect(elsewhere.person).toEqual(person);
    // and the address goes on with other usernames.
    const other = await newPerson();
    expect((await signIn({ username: other.username, password: PASSWORD }, FROM)).person).toEqual(other);
  });

  // Failures are counted when the attempt starts: guesses sent at once must not
  // overwrite each other's count (an earlier bug counted any number as one).
  it("counts failures that arrive at the same time", async () => {
    const person = await newPerson();
    const guesses = Array.from({ length: 10 }, (_, index) => signIn({ username: person.username, password: `wrong guess number ${index}` }, FROM));
    const codes = (await Promise.allSettled(guesses)).map((result) => (result.status === "rejected" ? (result.reason as { code: string }).code : "signed in"));
    for (const code of codes) expect(["unauthenticated", "rate_limited"]).toContain(code);
    await expectBatonError(signIn({ username: person.username, password: PASSWORD }, FROM), "rate_limited");
  });

  it("forgets earlier failures after a successful sign-in", async () => {
    const person = await newPerson();
    for (let attempt = 1; attempt <= 4; attempt++) await failSignIn(person.username);
    await signIn({ username: person.username, password: PASSWORD }, FROM);
    for (let attempt = 1; attempt <= 4; attempt++) await failSignIn(person.username);
    expect((await signIn({ username: person.username, password: PASSWORD }, FROM)).person).toEqual(person);
  });
});

describe("startSession", () => {
  it("stores only the SHA-256 of the secret", async () => {
    const person = await newPerson();
    const session = await startSession(person, "setup");
    const row = await sessionRow(session.secret);
    expect(row).toMatchObject({ id: sessionIdOf(session.secret), userId: person.id, endedAt: null, expiresAt: session.expiresAt });
    expect(row!.id).not.toBe(session.secret);
    expect(row!.lastSeenAt).toEqual(row!.createdAt);
    expect(JSON.stringify(await (await database()).session.findMany())).not.toContain(session.secret);
    expect(await eventsAbout(person.id, ["signed_in"])).toEqual([
      { kind: "signed_in", actor: person.username, data: { user_id: person.id, how: "setup" } },
    ]);
  });
});

describe("personOfSession", () => {
  it("is null for no secret, an unknown one or an absurdly long one", async () => {
    for (const secret of [undefined, null, "", "unknown-secret", "x".repeat(101)]) {
      expect(await personOfSession(secret), String(secret)).toBeNull();
    }
  });

  it.each([
    ["ended", () => ({ endedAt: new Date() })],
    ["expired", () => ({ expiresAt: new Date(Date.now() - 1_000) })],
    ["idle too long", () => ({ lastSeenAt: new Date(Date.now() - SESSION_IDLE_MS - MINUTE) })],
  ])("is null for a session that is %s", async (_what, change) => {
    const person = await newPerson();
    const { secret } = await startSession(person, "password");
    expect(await personOfSession(secret)).toEqual(person);
    await alterSession(secret, change());
    expect(await personOfSession(secret)).toBeNull();
  });

  it("keeps a session seen within the idle limit, and records that it was seen", async () => {
    const person = await newPerson();
    const { secret } = await startSession(person, "password");
    await alterSession(secret, { lastSeenAt: new Date(Date.now() - 6 * DAY) });
    const before = Date.now();
    expect(await personOfSession(secret)).toEqual(person);
    expect((await sessionRow(secret))!.lastSeenAt.getTime()).toBeGreaterThanOrEqual(before);
  });

  it("does not write on every request: a session seen a minute ago is left alone", async () => {
    const person = await newPerson();
    const { secret } = await startSession(person, "password");
    const minuteAgo = new Date(Date.now() - MINUTE);
    await alterSession(secret, { lastSeenAt: minuteAgo });
    expect(await personOfSession(secret)).toEqual(person);
    expect((await sessionRow(secret))!.lastSeenAt).toEqual(minuteAgo);
  });

  it("reflects the person's current role", async () => {
    const person = await newPerson("viewer");
    const { secret } = await startSession(person, "password");
    await changeUser(admin, person.id, { role: "operator" });
    expect(await personOfSession(secret)).toEqual({ ...person, role: "operator" });
  });
});

describe("endSession", () => {
  it("makes the cookie worthless and records signed_out once", async () => {
    const person = await newPerson();
    const { secret } = await startSession(person, "password");
    await endSession(secret);
    expect(await personOfSession(secret)).toBeNull();
    expect((await sessionRow(secret))!.endedAt).toBeInstanceOf(Date);
    await endSession(secret);
    expect(await eventsAbout(person.id, ["signed_in", "signed_out"])).toEqual([
      { kind: "signed_in", actor: person.username, data: { user_id: person.id, how: "password" } },
      { kind: "signed_out", actor: person.username, data: { user_id: person.id } },
    ]);
  });

  it("ends only that session", async () => {
    const person = await newPerson();
    const kept = await startSession(person, "password");
    const ended = await startSession(person, "password");
    await endSession(ended.secret);
    expect(await personOfSession(kept.secret)).toEqual(person);
  });

  it("does nothing for no secret or an unknown one", async () => {
    const before = await (await database()).ledgerEvent.count();
    await endSession(undefined);
    await endSession(null);
    await endSession("");
    await endSession("never-issued");
    expect(await (await database()).ledgerEvent.count()).toBe(before);
  });
});

describe("session cookies", () => {
  const expires = new Date("2026-12-29T10:00:00.000Z");

  it("is HttpOnly, SameSite=Lax, for the whole site, Secure only when asked", () => {
    expect(SESSION_COOKIE).toBe("baton_session");
    expect(sessionCookie("s3cret", expires, false)).toBe(
      "baton_session=s3cret; Path=/; HttpOnly; SameSite=Lax; Expires=Tue, 29 Dec 2026 10:00:00 GMT",
    );
    expect(sessionCookie("s3cret", expires, true)).toBe(
      "baton_session=s3cret; Path=/; HttpOnly; SameSite=Lax; Expires=Tue, 29 Dec 2026 10:00:00 GMT; Secure",
    );
  });

  it("is cleared with an empty value and Max-Age=0", () => {
    expect(clearedSessionCookie(false)).toBe("baton_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0");
    expect(clearedSessionCookie(true)).toBe("baton_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure");
  });
});
