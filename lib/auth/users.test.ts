import { beforeAll, describe, expect, it } from "vitest";
import { database } from "../db/client";
import { BatonError } from "../core/errors";
import { expectBatonError } from "@/testing/expect-baton-error";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { verifyPassword } from "./passwords";
import type { Person, Role } from "./roles";
import { personOfSession, SESSION_COOKIE, signIn, startSession } from "./sessions";
import * as usersRoute from "@/app/api/v1/users/route";
import * as userRoute from "@/app/api/v1/users/[id]/route";
import { changeUser, createFirstAdmin, createUser, createUserAs, hasAnyUser, listUsers, newAccountSchema, setPassword, type UserDto } from "./users";

freshDatabaseForThisFile();

const PASSWORD = "a long enough password";
/** The address these sign-ins come from: one of its own, so that files sharing a worker do not share its sign-in bucket. */
const FROM = "192.0.2.13";
let serial = 0;
const uniqueName = (prefix: string) => `${prefix}-${++serial}`;

/** Ledger events of the given kinds about one user, oldest first, with their data parsed. */
async function userEventsOf(kinds: string[], userId: string) {
  const rows = await (await database()).ledgerEvent.findMany({ where: { kind: { in: kinds } }, orderBy: { seq: "asc" } });
  return rows
    .map((row) => ({ kind: row.kind, actor: row.actor, threadKey: row.threadKey, data: JSON.parse(row.data) as Record<string, unknown> }))
    .filter((event) => event.data.user_id === userId);
}
const userEvents = async (kind: string, userId: string) => (await userEventsOf([kind], userId)).map((event) => ({ actor: event.actor, threadKey: event.threadKey, data: event.data }));

const ledgerCount = async () => (await database()).ledgerEvent.count();
const userRow = async (id: string) => (await database()).user.findUniqueOrThrow({ where: { id } });
const activeAdmins = async () => (await database()).user.count({ where: { role: "admin", disabledAt: null } });

// The first visit to the fresh install: two first visitors at once.
let race: PromiseSettledResult<Person>[];
let admin: Person;
const firstVisitors = [
  { username: "first-one", password: PASSWORD },
  { username: "first-two", password: PASSWORD },
];

beforeAll(async () => {
  expect(await hasAnyUser()).toBe(false);
  race = await Promise.allSettled(firstVisitors.map((input) => createFirstAdmin(input)));
  const won = race.find((result) => result.status === "fulfilled");
  if (!won) throw new Error(`no first admin was created: ${JSON.stringify(race)}`);
  admin = won.value;
});

/**
 * POST /api/v1/users and PATCH /api/v1/users/{id} as the admin: the body is parsed
 * there (lib/http/route.ts), so what a bad one is told is checked over HTTP.
 */
async function asAdmin(method: "POST" | "PATCH", body: unknown, userId?: string): Promise<{ status: number; error: BatonError }> {
  const { secret } = await startSession(admin, "password");
  const url = `http://baton.test/api/v1/users${userId ? `/${userId}` : ""}`;
  const request = new Request(url, {
    method,
    headers: { cookie: `${SESSION_COOKIE}=${secret}`, origin: "http://baton.test", host: "baton.test", "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const response = userId ? await userRoute.PATCH(request, { params: Promise.resolve({ id: userId }) }) : await usersRoute.POST(request);
  const { error } = (await response.json()) as { error: { code: "invalid_request"; message: string; details: unknown } };
  return { status: response.status, error: new BatonError(error.code, error.message, error.details) };
}

function newUser(role: Role, prefix: string = role): Promise<UserDto> {
  return createUser(admin, { username: uniqueName(prefix), password: PASSWORD, role });
}

/** A person as the session code sees them, from a DTO. */
const personOf = (user: UserDto): Person => ({ id: user.id, username: user.username, role: user.role });

describe("createFirstAdmin", () => {
  it("lets exactly one of two concurrent first visitors become the admin", async () => {
    const fulfilled = race.filter((result) => result.status === "fulfilled");
    const rejected = race.filter((result) => result.status === "rejected");
    expect(fulfilled).toHaveLength(1);
    expect(rejected).toHaveLength(1);
    const error = rejected[0]!.reason as BatonError;
    expect(error).toBeInstanceOf(BatonError);
    expect(error.code).toBe("conflict");
    expect(error.status).toBe(409);

    const users = await listUsers();
    expect(users).toHaveLength(1);
    expect(users[0]).toEqual({ id: admin.id, username: admin.username, role: "admin", created_at: expect.any(String), disabled: false });
    expect(firstVisitors.map((visitor) => visitor.username)).toContain(admin.username);
    expect(admin.id).toMatch(/^usr_/);
    expect(await hasAnyUser()).toBe(true);
  });

  it("stores an Argon2id hash of the password, never the password", async () => {
    const row = await userRow(admin.id);
    expect(row.passwordHash).toMatch(/^\$argon2id\$/);
    expect(row.passwordHash).not.toContain(PASSWORD);
    expect(await verifyPassword(row.passwordHash, PASSWORD)).toBe(true);
  });

  it("records user_created with the new admin as the actor", async () => {
    expect(await userEvents("user_created", admin.id)).toEqual([
      { actor: admin.username, threadKey: null, data: { user_id: admin.id, username: admin.username, role: "admin" } },
    ]);
  });

  it("refuses once anyone exists (409 conflict), writing nothing", async () => {
    const before = await ledgerCount();
    const error = await expectBatonError(createFirstAdmin({ username: "latecomer", password: PASSWORD }), "conflict");
    expect(error.status).toBe(409);
    expect(error.message).toMatch(/already has an admin/);
    expect((await listUsers()).map((user) => user.username)).not.toContain("latecomer");
    expect(await ledgerCount()).toBe(before);
  });

  it("checks the input before anything else", async () => {
    const error = await expectBatonError(createFirstAdmin({ username: "someone", password: "short" }), "invalid_request");
    expect(error.details).toEqual({ fields: [{ field: "password", problem: "password must be at least 12 characters" }] });
  });
});

describe("createUser", () => {
  it("creates a person with a trimmed lowercase username and records who created them", async () => {
    const name = uniqueName("carol");
    const user = await createUser(admin, newAccountSchema.parse({ username: `  ${name.toUpperCase()} `, password: PASSWORD, role: "operator" }));
    expect(user).toEqual({ id: expect.stringMatching(/^usr_/), username: name, role: "operator", created_at: expect.any(String), disabled: false });
    expect(Date.now() - Date.parse(user.created_at)).toBeLessThan(60_000);
    expect(await userEvents("user_created", user.id)).toEqual([
      { actor: admin.username, threadKey: null, data: { user_id: user.id, username: name, role: "operator" } },
    ]);
  });

  it.each([
    ["a username that is too short", { username: "a", password: PASSWORD, role: "viewer" }, ["username"]],
    ["a username with spaces", { username: "two words", password: PASSWORD, role: "viewer" }, ["username"]],
    ["a username starting with a dot", { username: ".hidden", password: PASSWORD, role: "viewer" }, ["username"]],
    ["a username of 41 characters", { username: "a".repeat(41), password: PASSWORD, role: "viewer" }, ["username"]],
    ["a short password", { username: "valid-name", password: "eleven char", role: "viewer" }, ["password"]],
    ["a password of 257 characters", { username: "valid-name", password: "p".repeat(257), role: "viewer" }, ["password"]],
    ["an unknown role", { username: "valid-name", password: PASSWORD, role: "root" }, ["role"]],
    ["nothing at all", {}, ["username", "password", "role"]],
  ])("refuses %s with invalid_request naming the field", async (_what, input, fields) => {
    const before = (await listUsers()).length;
    const { status, error } = await asAdmin("POST", input);
    expect(status).toBe(400);
    expect(error.code).toBe("invalid_request");
    const named = (error.details as { fields: { field: string }[] }).fields.map((item) => item.field);
    expect(named).toEqual(fields);
    for (const field of fields) expect(error.message).toContain(`${field}:`);
    expect((await listUsers()).length).toBe(before);
  });

  it("refuses unknown keys", async () => {
    const { status, error } = await asAdmin("POST", { username: "valid-name", password: PASSWORD, role: "viewer", admin: true });
    expect(status).toBe(400);
    expect(error.message).toMatch(/admin/);
  });

  it("refuses a taken username whatever its case (409), writing nothing", async () => {
    const name = uniqueName("dave");
    await createUser(admin, { username: name, password: PASSWORD, role: "viewer" });
    const before = { users: (await listUsers()).length, events: await ledgerCount() };
    const error = await expectBatonError(createUser(admin, newAccountSchema.parse({ username: ` ${name.toUpperCase()}`, password: PASSWORD, role: "admin" })), "conflict");
    expect(error.status).toBe(409);
    expect(error.details).toEqual({ field: "username" });
    expect(error.message).toContain(`"${name}"`);
    expect({ users: (await listUsers()).length, events: await ledgerCount() }).toEqual(before);
  });

  it("lists people oldest first", async () => {
    const a = await newUser("viewer", "list");
    const b = await newUser("viewer", "list");
    const ids = (await listUsers()).map((user) => user.id);
    expect(ids[0]).toBe(admin.id);
    expect(ids.indexOf(a.id)).toBeLessThan(ids.indexOf(b.id));
  });
});

describe("createUserAs", () => {
  it("creates a person as the createUser of a person does, recording the actor given (cli)", async () => {
    const name = uniqueName("from-cli");
    const user = await createUserAs("cli", newAccountSchema.parse({ username: ` ${name.toUpperCase()}`, password: PASSWORD, role: "admin" }));
    expect(user).toEqual({ id: expect.stringMatching(/^usr_/), username: name, role: "admin", created_at: expect.any(String), disabled: false });
    expect(await verifyPassword((await userRow(user.id)).passwordHash, PASSWORD)).toBe(true);
    expect(await userEvents("user_created", user.id)).toEqual([{ actor: "cli", threadKey: null, data: { user_id: user.id, username: name, role: "admin" } }]);
    // Put things back: one active admin, as the other tests expect.
    await changeUser(admin, user.id, { role: "viewer" });
  });

  it("refuses a taken username exactly as createUser does", async () => {
    const taken = await expectBatonError(createUserAs("cli", { username: admin.username, password: PASSWORD, role: "viewer" }), "conflict");
    expect(taken.details).toEqual({ field: "username" });
  });
});

describe("setPassword", () => {
  const NEW_PASSWORD = "a different long password";

  it("replaces the hash, ends every session of that person only, and records who did it", async () => {
    const user = await newUser("operator", "forgetful");
    const bystander = await newUser("viewer", "bystander");
    const sessions = [await signIn({ username: user.username, password: PASSWORD }, FROM), await startSession(personOf(user), "password")];
    const theirs = await signIn({ username: bystander.username, password: PASSWORD }, FROM);

    const result = await setPassword("cli", ` ${user.username.toUpperCase()}`, NEW_PASSWORD);
    expect(result).toEqual({ user, sessionsEnded: 2 });
    const row = await userRow(user.id);
    expect(row.passwordHash).toMatch(/^\$argon2id\$/);
    expect(await verifyPassword(row.passwordHash, NEW_PASSWORD)).toBe(true);
    expect(await verifyPassword(row.passwordHash, PASSWORD)).toBe(false);
    for (const session of sessions) expect(await personOfSession(session.secret)).toBeNull();
    expect(await personOfSession(theirs.secret)).toEqual(personOf(bystander));
    await expectBatonError(signIn({ username: user.username, password: PASSWORD }, FROM), "unauthenticated");
    expect(await personOfSession((await signIn({ username: user.username, password: NEW_PASSWORD }, FROM)).secret)).toEqual(personOf(user));

    const events = await userEvents("user_password_set", user.id);
    expect(events).toEqual([{ actor: "cli", threadKey: null, data: { user_id: user.id, username: user.username, sessions_ended: 2 } }]);
    expect(JSON.stringify(events)).not.toContain(NEW_PASSWORD);
  });

  it("leaves a disabled account disabled", async () => {
    const user = await newUser("viewer", "dormant");
    await changeUser(admin, user.id, { disabled: true });
    expect((await setPassword(admin.username, user.username, NEW_PASSWORD)).user.disabled).toBe(true);
    expect((await userRow(user.id)).disabledAt).toBeInstanceOf(Date);
    await expectBatonError(signIn({ username: user.username, password: NEW_PASSWORD }, FROM), "unauthenticated");
  });

  it.each([
    ["an unknown username", "nobody-here", NEW_PASSWORD, "not_found", "username"],
    ["a malformed username", "two words", NEW_PASSWORD, "invalid_request", "username"],
    ["a short password", null, "too short", "invalid_request", "password"],
    ["a password of 257 characters", null, "p".repeat(257), "invalid_request", "password"],
  ])("refuses %s, naming the field and writing nothing", async (_what, username, password, code, field) => {
    const user = await newUser("viewer", "unchanged");
    const before = { hash: (await userRow(user.id)).passwordHash, events: await ledgerCount() };
    const error = await expectBatonError(setPassword("cli", username ?? user.username, password), code);
    if (code === "not_found") {
      expect(error.details).toEqual({ field });
      expect(error.message).toBe(`No user is named "${username}".`);
    } else {
      expect((error.details as { fields: { field: string }[] }).fields.map((item) => item.field)).toEqual([field]);
      expect(error.message).toContain(`${field}:`);
    }
    expect({ hash: (await userRow(user.id)).passwordHash, events: await ledgerCount() }).toEqual(before);
  });
});

describe("changeUser", () => {
  it("changes a role and records from and to", async () => {
    const user = await newUser("viewer");
    const changed = await changeUser(admin, user.id, { role: "operator" });
    expect(changed).toEqual({ ...user, role: "operator" });
    expect((await userRow(user.id)).role).toBe("operator");
    expect(await userEvents("user_role_changed", user.id)).toEqual([
      { actor: admin.username, threadKey: null, data: { user_id: user.id, username: user.username, from: "viewer", to: "operator" } },
    ]);
  });

  it("records nothing when the role does not change", async () => {
    const user = await newUser("operator");
    const before = await ledgerCount();
    expect(await changeUser(admin, user.id, { role: "operator" })).toEqual(user);
    expect(await ledgerCount()).toBe(before);
  });

  it("disables an account, ending its sessions at once, and enables it again", async () => {
    const user = await newUser("operator");
    const first = await startSession(personOf(user), "password");
    const second = await signIn({ username: user.username, password: PASSWORD }, FROM);
    expect(await personOfSession(first.secret)).toEqual(personOf(user));

    expect(await changeUser(admin, user.id, { disabled: true })).toEqual({ ...user, disabled: true });
    expect(await personOfSession(first.secret)).toBeNull();
    expect(await personOfSession(second.secret)).toBeNull();
    const sessions = await (await database()).session.findMany({ where: { userId: user.id } });
    expect(sessions).toHaveLength(2);
    for (const session of sessions) expect(session.endedAt).toBeInstanceOf(Date);
    await expectBatonError(signIn({ username: user.username, password: PASSWORD }, FROM), "unauthenticated");

    expect(await changeUser(admin, user.id, { disabled: false })).toEqual(user);
    // Enabling does not bring ended sessions back; signing in does work again.
    expect(await personOfSession(first.secret)).toBeNull();
    const again = await signIn({ username: user.username, password: PASSWORD }, FROM);
    expect(await personOfSession(again.secret)).toEqual(personOf(user));

    const about = { actor: admin.username, threadKey: null, data: { user_id: user.id, username: user.username } };
    expect(await userEventsOf(["user_disabled", "user_enabled"], user.id)).toEqual([
      { kind: "user_disabled", ...about },
      { kind: "user_enabled", ...about },
    ]);
  });

  it("keeps the first disabled time and records nothing when disabling twice", async () => {
    const user = await newUser("viewer");
    await changeUser(admin, user.id, { disabled: true });
    const disabledAt = (await userRow(user.id)).disabledAt;
    expect(disabledAt).toBeInstanceOf(Date);
    const before = await ledgerCount();
    await changeUser(admin, user.id, { disabled: true });
    expect((await userRow(user.id)).disabledAt).toEqual(disabledAt);
    expect(await ledgerCount()).toBe(before);
  });

  it("records a role change and a disabling made together as two events", async () => {
    const user = await newUser("viewer");
    await changeUser(admin, user.id, { role: "operator", disabled: true });
    expect(await userEvents("user_role_changed", user.id)).toHaveLength(1);
    expect(await userEvents("user_disabled", user.id)).toHaveLength(1);
    expect(await userRow(user.id)).toMatchObject({ role: "operator", disabledAt: expect.any(Date) });
  });

  it("refuses to demote or disable the last active admin, writing nothing", async () => {
    expect(await activeAdmins()).toBe(1);
    const before = await ledgerCount();
    for (const [change, field] of [
      [{ role: "operator" }, "role"],
      [{ role: "viewer" }, "role"],
      [{ disabled: true }, "disabled"],
    ] as const) {
      const error = await expectBatonError(changeUser(admin, admin.id, change), "conflict");
      expect(error.details).toEqual({ field });
      expect(error.message).toMatch(/last active admin/);
    }
    expect(await userRow(admin.id)).toMatchObject({ role: "admin", disabledAt: null });
    expect(await ledgerCount()).toBe(before);
    // Re-stating the admin role is not losing it.
    expect((await changeUser(admin, admin.id, { role: "admin" })).role).toBe("admin");
  });

  it("lets an admin be demoted while another admin is active, then protects the one left", async () => {
    const second = await newUser("admin", "second-admin");
    expect((await changeUser(admin, second.id, { role: "operator" })).role).toBe("operator");
    await expectBatonError(changeUser(admin, admin.id, { disabled: true }), "conflict");

    const third = await newUser("admin", "third-admin");
    expect((await changeUser(admin, admin.id, { role: "viewer" })).role).toBe("viewer");
    const error = await expectBatonError(changeUser(admin, third.id, { disabled: true }), "conflict");
    expect(error.details).toEqual({ field: "disabled" });

    // Put things back: the first admin again, the third one demoted.
    await changeUser(admin, admin.id, { role: "admin" });
    await changeUser(admin, third.id, { role: "operator" });
    expect(await activeAdmins()).toBe(1);
  });

  it("lets only one of two admins demoted at the same time go", async () => {
    const second = await newUser("admin", "race-admin");
    const results = await Promise.allSettled([
      changeUser(admin, admin.id, { role: "operator" }),
      changeUser(admin, second.id, { role: "operator" }),
    ]);
    expect(results.map((result) => result.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect(results.find((result) => result.status === "rejected")).toMatchObject({ reason: { code: "conflict" } });
    expect(await activeAdmins()).toBe(1);
    // Put things back: the first admin an admin, the second one not.
    await changeUser(admin, admin.id, { role: "admin" });
    await changeUser(admin, second.id, { role: "operator" });
    expect(await activeAdmins()).toBe(1);
  });

  it("does not count a disabled admin as one who can administer", async () => {
    const dormant = await newUser("admin", "dormant-admin");
    await changeUser(admin, dormant.id, { disabled: true });
    expect(await activeAdmins()).toBe(1);
    await expectBatonError(changeUser(admin, admin.id, { role: "operator" }), "conflict");
    // A disabled admin loses nothing by being demoted.
    expect((await changeUser(admin, dormant.id, { role: "viewer" })).role).toBe("viewer");
  });

  it("answers not_found for an unknown id", async () => {
    const error = await expectBatonError(changeUser(admin, "usr_missing", { role: "viewer" }), "not_found");
    expect(error.status).toBe(404);
    expect(error.message).toContain('"usr_missing"');
  });

  it.each([
    ["an empty change", {}, "(body)"],
    ["an unknown role", { role: "owner" }, "role"],
    ["disabled as a string", { disabled: "yes" }, "disabled"],
  ])("refuses %s with invalid_request", async (_what, change, field) => {
    const user = await newUser("viewer");
    const { status, error } = await asAdmin("PATCH", change, user.id);
    expect([status, error.code]).toEqual([400, "invalid_request"]);
    expect((error.details as { fields: { field: string }[] }).fields.map((item) => item.field)).toEqual([field]);
    expect(await userRow(user.id)).toMatchObject({ role: "viewer", disabledAt: null });
  });
});
