import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { PassThrough, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import { GET as getHandoff } from "../app/api/v1/threads/[key]/handoff/route";
import { verifyPassword } from "../lib/auth/passwords";
import { personOfSession, signIn } from "../lib/auth/sessions";
import { authenticateBearer, createApiToken, listApiTokens } from "../lib/auth/tokens";
import { changeUser, hasAnyUser, listUsers, toPerson } from "../lib/auth/users";
import { database } from "../lib/db/client";
import { BatonError } from "../lib/core/errors";
import { ingestPacket } from "../lib/ingest/ingest";
import { testsRunOnPostgresql } from "@/testing/postgresql";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { main } from "./main";
import type { PasswordSource } from "./user-command";

freshDatabaseForThisFile();

let log: MockInstance<typeof console.log>;
let error: MockInstance<typeof console.error>;
let stderr: MockInstance<typeof process.stderr.write>;
beforeEach(() => {
  log = vi.spyOn(console, "log").mockImplementation(() => undefined);
  error = vi.spyOn(console, "error").mockImplementation(() => undefined);
  stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
});
afterEach(() => {
  vi.restoreAllMocks();
});

const lines = (spy: MockInstance<(...args: never[]) => unknown>) => spy.mock.calls.map((call) => call.map(String).join(" "));

// It reads a SQLite file (lib/events/consistency.ts); on PostgreSQL the command says so and exits 1.
describe.skipIf(testsRunOnPostgresql())("baton ledger check", () => {
  it("reports a ledger written by ingest as consistent, read-only, and exits 0", async () => {
    await ingestPacket({ thread: "cli-ledger", summary: "checked", next_action: "go on", open_risks: [{ severity: "low", detail: "small" }] }, { kind: "cli", actor: "cli" });
    const db = await database();
    const before = await db.ledgerEvent.count();
    expect(await main(["ledger", "check"])).toBe(0);
    const printed = lines(log);
    expect(printed[0]).toBe("integrity: ok");
    expect(printed.at(-1)).toBe("consistent");
    expect(await (await database()).ledgerEvent.count()).toBe(before);
  });
});

describe("baton token", () => {
  it("creates a token, prints it once on stdout, and it authenticates", async () => {
    const code = await main(["token", "create", "--name", "x", "--scope", "packets:read"]);
    expect(code).toBe(0);
    expect(lines(log)).toHaveLength(1);
    const token = lines(log)[0]!;
    expect(token).toMatch(/^btn_[a-z0-9]{8}_[A-Za-z0-9]{32}$/);
    expect(lines(error).join("\n")).toContain(`Created ${token.slice(0, 12)}...${token.slice(-4)} (packets:read)`);
    expect(lines(error).join("\n")).not.toContain(token);

    expect(await authenticateBearer(`Bearer ${token}`, "packets:read")).toMatchObject({ name: "x", scopes: ["packets:read"] });
    const refused = await authenticateBearer(`Bearer ${token}`, "packets:write").catch((caught: unknown) => caught);
    expect((refused as BatonError).code).toBe("forbidden");
  });

  it("takes several scopes and defaults to packets:write", async () => {
    expect(await main(["token", "create", "--name", "multi", "--scope", "packets:read", "events:write"])).toBe(0);
    expect(await main(["token", "create", "--name", "default"])).toBe(0);
    const tokens = await listApiTokens();
    expect(tokens.find((token) => token.name === "multi")?.scopes).toEqual(["events:write", "packets:read"]);
    expect(tokens.find((token) => token.name === "default")?.scopes).toEqual(["packets:write"]);
  });

  it("refuses an unknown scope or a missing name and creates nothing", async () => {
    const db = await database();
    const before = await db.apiToken.count();
    expect(await main(["token", "create", "--name", "bad", "--scope", "admin:all"])).not.toBe(0);
    expect(await main(["token", "create", "--scope", "packets:read"])).not.toBe(0);
    expect(await (await database()).apiToken.count()).toBe(before);
    expect(stderr.mock.calls.map((call) => String(call[0])).join("")).toMatch(/admin:all/);
  });

  it("lists and revokes tokens", async () => {
    expect(await main(["token", "create", "--name", "to-revoke", "--scope", "packets:write"])).toBe(0);
    const token = lines(log)[0]!;
    const display = `${token.slice(0, 12)}...${token.slice(-4)}`;
    log.mockClear();

    expect(await main(["token", "list"])).toBe(0);
    const listed = lines(log).find((line) => line.startsWith(display));
    expect(listed).toMatch(new RegExp(`^${display.replace(/\./g, "\\.")}  to-revoke  packets:write  any project  last used never$`));
    expect(lines(log).join("\n")).not.toContain(token);
    log.mockClear();

    expect(await main(["token", "revoke", display])).toBe(0);
    expect(lines(log)).toEqual([`revoked ${display} (to-revoke)`]);
    const refused = await authenticateBearer(`Bearer ${token}`, "packets:write").catch((caught: unknown) => caught);
    expect((refused as BatonError).code).toBe("unauthenticated");
    log.mockClear();

    expect(await main(["token", "list"])).toBe(0);
    expect(lines(log).find((line) => line.startsWith(display))).toMatch(/  revoked \d{4}-\d\d-\d\dT/);
  });

  it("binds a token to a project with --project, shows it in the list, and refuses a blank one naming the option's rule", async () => {
    expect(await main(["token", "create", "--name", "billing agent", "--project", " billing "])).toBe(0);
    const token = lines(log)[0]!;
    expect(lines(error).join("\n")).toContain("(packets:write, project billing)");
    expect(await authenticateBearer(`Bearer ${token}`, "packets:write")).toMatchObject({ name: "billing agent", project: "billing" });
    log.mockClear();
    expect(await main(["token", "list"])).toBe(0);
    expect(lines(log).find((line) => line.startsWith(token.slice(0, 12)))).toContain("  billing agent  packets:write  project billing  last used ");

    error.mockClear();
    expect(await main(["token", "create", "--name", "blank project", "--project", "  "])).toBe(1);
    expect(lines(error).join("\n")).toContain("project must not be blank");
    expect((await listApiTokens()).some((listed) => listed.name === "blank project")).toBe(false);
  });

  it("fails to revoke an unknown token", async () => {
    expect(await main(["token", "revoke", "btn_unknown0"])).toBe(1);
    expect(lines(error).join("\n")).toContain('No token matches "btn_unknown0"');
  });
});

describe("baton demo --agents", () => {
  it("loads a fleet of the size asked, and refuses a size out of range naming the option", async () => {
    const db = await database();
    const before = await db.thread.count();
    expect(await main(["demo", "--agents", "0"])).not.toBe(0);
    expect(await main(["demo", "--agents", "2001"])).not.toBe(0);
    expect(stderr.mock.calls.map((call) => String(call[0])).join("")).toMatch(/--agents must be a whole number from 1 to 2000/);
    expect(await db.thread.count()).toBe(before);
    expect(await main(["demo", "--agents", "60"])).toBe(0);
    expect(await db.thread.count()).toBe(before + 60);
  }, 60_000);
});

describe("baton user", () => {
  const PASSWORD = "a long enough password";
  /** Where these sign-ins come from: an address of this file's own (files in a worker share the sign-in throttle). */
  const FROM = "192.0.2.14";
  const saved = process.env.BATON_PASSWORD;
  afterEach(() => {
    if (saved === undefined) delete process.env.BATON_PASSWORD;
    else process.env.BATON_PASSWORD = saved;
  });

  /** A piped stdin holding `text`, and nowhere for prompts to go (a pipe gets none). */
  const piped = (text: string): PasswordSource => {
    const stdin = new PassThrough();
    stdin.end(text);
    return { stdin, prompts: new PassThrough() };
  };
  /** A terminal: each chunk is one burst of keys; prompts are collected; raw mode is recorded. */
  const terminal = (...chunks: string[]) => {
    const stdin = Object.assign(new PassThrough(), { isTTY: true, setRawMode: vi.fn() });
    for (const chunk of chunks) stdin.write(chunk);
    let shown = "";
    const prompts = new Writable({
      write(chunk: Buffer, _encoding, done) {
        shown += chunk.toString("utf8");
        done();
      },
    });
    return { source: { stdin, prompts } as PasswordSource, shown: () => shown, rawMode: stdin.setRawMode };
  };
  const userNamed = async (username: string) => (await database()).user.findUnique({ where: { username } });
  const eventsAbout = async (kind: string, username: string) =>
    (await (await database()).ledgerEvent.findMany({ where: { kind }, orderBy: { seq: "asc" } }))
      .map((row) => ({ actor: row.actor, data: JSON.parse(row.data) as Record<string, unknown>, raw: row.data }))
      .filter((event) => event.data.username === username);

  it("creates the first admin of a fresh install from BATON_PASSWORD, recorded as done by cli", async () => {
    expect(await hasAnyUser()).toBe(false);
    process.env.BATON_PASSWORD = PASSWORD;
    // The stdin is not read when BATON_PASSWORD is set.
    const stdin = piped("not this one\n");
    expect(await main(["user", "create", "  Mei ", "--role", "admin"], stdin)).toBe(0);
    expect(stdin.stdin.readableLength).toBeGreaterThan(0);
    expect(lines(log)).toEqual(["created mei (admin)"]);
    expect(lines(error)).toEqual([]);

    const row = await userNamed("mei");
    expect(row).toMatchObject({ role: "admin", disabledAt: null });
    expect(await verifyPassword(row!.passwordHash, PASSWORD)).toBe(true);
    const session = await signIn({ username: "mei", password: PASSWORD }, FROM);
    expect(await personOfSession(session.secret)).toEqual(toPerson(row!));
    const events = await eventsAbout("user_created", "mei");
    expect(events.map(({ actor, data }) => ({ actor, data }))).toEqual([{ actor: "cli", data: { user_id: row!.id, username: "mei", role: "admin" } }]);
    expect(events[0]!.raw).not.toContain(PASSWORD);
  });

  it("reads the password from the first line of a piped stdin", async () => {
    delete process.env.BATON_PASSWORD;
    expect(await main(["user", "create", "ren", "--role", "operator"], piped(`${PASSWORD}\r\nthe next line is not part of it\n`))).toBe(0);
    expect(lines(log)).toEqual(["created ren (operator)"]);
    expect(await verifyPassword((await userNamed("ren"))!.passwordHash, PASSWORD)).toBe(true);

    // No newline at all: everything up to the end.
    expect(await main(["user", "create", "sam", "--role", "viewer"], piped(PASSWORD))).toBe(0);
    expect(await verifyPassword((await userNamed("sam"))!.passwordHash, PASSWORD)).toBe(true);
  });

  it("asks twice without echo on a terminal, honouring backspace", async () => {
    delete process.env.BATON_PASSWORD;
    const tty = terminal(`${PASSWORD}X\u007f\r`, `${PASSWORD}\r`);
    expect(await main(["user", "create", "tess", "--role", "viewer"], tty.source)).toBe(0);
    expect(await verifyPassword((await userNamed("tess"))!.passwordHash, PASSWORD)).toBe(true);
    expect(tty.shown()).toBe("Password for tess (not shown): \nSame password again: \n");
    expect(tty.rawMode.mock.calls).toEqual([[true], [false], [true], [false]]);
  });

  it("refuses two different passwords typed on a terminal, and Ctrl-C, creating nothing", async () => {
    delete process.env.BATON_PASSWORD;
    expect(await main(["user", "create", "typo", "--role", "viewer"], terminal(`${PASSWORD}\r`, `${PASSWORD}!\r`).source)).toBe(1);
    expect(lines(error)).toEqual(["baton: the two passwords differ; nothing changed"]);
    error.mockClear();
    const cancelled = terminal("a long\u0003");
    expect(await main(["user", "create", "typo", "--role", "viewer"], cancelled.source)).toBe(1);
    expect(lines(error)).toEqual(["baton: cancelled; nothing changed"]);
    expect(cancelled.rawMode.mock.calls).toEqual([[true], [false]]);
    expect(await userNamed("typo")).toBeNull();
  });

  it.each([
    ["a bad username", ["x y", "--role", "viewer"], PASSWORD, /^baton: Bad user: username: username must be 2 to 40 /],
    ["a short password", ["valid-name", "--role", "viewer"], "eleven char", /^baton: Bad user: password: password must be at least 12 characters\.$/],
    ["no password at all", ["valid-name", "--role", "viewer"], "", /^baton: password: none given; set BATON_PASSWORD or send the password as the first line of stdin/],
    ["a taken username, whatever its case", ["MEI", "--role", "viewer"], PASSWORD, /^baton: The username "mei" is taken; choose another\.$/],
  ])("refuses %s on stderr with exit 1, writing nothing", async (_what, args, stdin, message) => {
    delete process.env.BATON_PASSWORD;
    const before = { users: await (await database()).user.count(), events: await (await database()).ledgerEvent.count() };
    expect(await main(["user", "create", ...args], piped(stdin ? `${stdin}\n` : ""))).toBe(1);
    expect(lines(error)).toEqual([expect.stringMatching(message)]);
    expect(lines(log)).toEqual([]);
    expect({ users: await (await database()).user.count(), events: await (await database()).ledgerEvent.count() }).toEqual(before);
  });

  it("refuses a missing or unknown role, and never takes a password as an argument", async () => {
    process.env.BATON_PASSWORD = PASSWORD;
    expect(await main(["user", "create", "norole"])).toBe(1);
    expect(await main(["user", "create", "norole", "--role", "root"])).toBe(1);
    expect(await main(["user", "create", "norole", "--role", "viewer", "--password", PASSWORD])).toBe(1);
    const said = stderr.mock.calls.map((call) => String(call[0])).join("");
    expect(said).toContain("required option '--role <role>' not specified");
    expect(said).toContain("Allowed choices are viewer, operator, admin");
    expect(said).toContain("unknown option '--password'");
    expect(await userNamed("norole")).toBeNull();
  });

  it("notes when the install has no active admin after the creation", async () => {
    process.env.BATON_PASSWORD = PASSWORD;
    expect(await main(["user", "create", "una", "--role", "viewer"])).toBe(0);
    expect(lines(error)).toEqual([]);

    // A viewer made first on a fresh install leaves nobody to administer (and the first-run page is gone).
    const db = await database();
    await db.user.update({ where: { username: "mei" }, data: { role: "viewer" } });
    try {
      expect(await main(["user", "create", "vic", "--role", "viewer"])).toBe(0);
      expect(lines(error)).toEqual(["note: Baton has no active admin yet; create one with `baton user create NAME --role admin`"]);
    } finally {
      await db.user.update({ where: { username: "mei" }, data: { role: "admin" } });
    }
  });

  it("sets a new password, ending every session of that person, recorded as done by cli", async () => {
    const NEW = "a brand new password";
    const first = await signIn({ username: "ren", password: PASSWORD }, FROM);
    const second = await signIn({ username: "ren", password: PASSWORD }, FROM);
    const other = await signIn({ username: "sam", password: PASSWORD }, FROM);
    delete process.env.BATON_PASSWORD;
    expect(await main(["user", "password", "REN"], piped(`${NEW}\n`))).toBe(0);
    expect(lines(log)).toEqual(["password set for ren; 2 session(s) ended"]);

    expect(await personOfSession(first.secret)).toBeNull();
    expect(await personOfSession(second.secret)).toBeNull();
    expect(await personOfSession(other.secret)).not.toBeNull();
    const row = (await userNamed("ren"))!;
    expect(await verifyPassword(row.passwordHash, NEW)).toBe(true);
    expect(await verifyPassword(row.passwordHash, PASSWORD)).toBe(false);
    expect(await personOfSession((await signIn({ username: "ren", password: NEW }, FROM)).secret)).toMatchObject({ username: "ren" });

    const events = await eventsAbout("user_password_set", "ren");
    expect(events.map(({ actor, data }) => ({ actor, data }))).toEqual([{ actor: "cli", data: { user_id: row.id, username: "ren", sessions_ended: 2 } }]);
    expect(events[0]!.raw).not.toContain(NEW);
  });

  it("sets the password of a disabled account, which stays disabled, and says so", async () => {
    const tess = (await userNamed("tess"))!;
    const admin = toPerson((await userNamed("mei"))!);
    await changeUser(admin, tess.id, { disabled: true });
    process.env.BATON_PASSWORD = "another long password";
    expect(await main(["user", "password", "tess"])).toBe(0);
    expect(lines(error)).toEqual(["note: tess is disabled; an admin can enable the account at /admin/users"]);
    expect((await userNamed("tess"))!.disabledAt).toBeInstanceOf(Date);
  });

  it.each([
    ["an unknown user", "nobody", PASSWORD, /^baton: No user is named "nobody"\.$/],
    ["a bad username", "x y", PASSWORD, /^baton: Bad password change: username: username must be 2 to 40 /],
    ["a short password", "ren", "too short", /^baton: Bad password change: password: password must be at least 12 characters\.$/],
  ])("refuses to set a password for %s on stderr with exit 1, changing nothing", async (_what, username, password, message) => {
    const before = { hash: (await userNamed("ren"))!.passwordHash, events: await (await database()).ledgerEvent.count() };
    process.env.BATON_PASSWORD = password;
    expect(await main(["user", "password", username])).toBe(1);
    expect(lines(error)).toEqual([expect.stringMatching(message)]);
    expect({ hash: (await userNamed("ren"))!.passwordHash, events: await (await database()).ledgerEvent.count() }).toEqual(before);
  });

  it("lists username, role, created and disabled, oldest first", async () => {
    expect(await main(["user", "list"])).toBe(0);
    const users = await listUsers();
    const printed = lines(log);
    expect(printed[0]).toMatch(/^username +role +created +disabled$/);
    expect(printed.slice(1).map((line) => line.split(/ +/))).toEqual(users.map((user) => [user.username, user.role, user.created_at, user.disabled ? "yes" : "no"]));
    expect(printed.slice(1).map((line) => line.split(/ +/)[0])).toEqual(["mei", "ren", "sam", "tess", "una", "vic"]);
    expect(printed.find((line) => line.startsWith("tess "))).toMatch(/ yes$/);
    // Columns line up.
    expect(new Set(printed.map((line) => line.indexOf(line.includes("username") ? "role" : line.split(/ +/)[1]!))).size).toBe(1);
  });

  describe("as a process (bin/baton.js)", () => {
    const BIN = fileURLToPath(new URL("../bin/baton.js", import.meta.url));
    const env = () => {
      const copy = { ...process.env };
      delete copy.BATON_PASSWORD;
      return copy;
    };

    it("takes the password piped on stdin: echo pw | baton user create", () => {
      const result = spawnSync(process.execPath, [BIN, "user", "create", "piped", "--role", "operator"], { env: env(), input: `${PASSWORD}\n`, encoding: "utf8", timeout: 60_000 });
      expect(result.stderr).toBe("");
      expect(result.stdout).toBe("created piped (operator)\n");
      expect(result.status).toBe(0);
    }, 70_000);

    // How the process reads its stdin is the same on either database: the SQLite pass tests it.
    it.skipIf(testsRunOnPostgresql())("does not wait for a writer that keeps the pipe open after the first line", async () => {
      const child = spawn(process.execPath, [BIN, "user", "password", "piped"], { env: env(), stdio: ["pipe", "pipe", "pipe"] });
      let out = "";
      child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
      child.stdin.write("a brand new password\n");
      const exited = await new Promise<number | null>((resolve) => {
        const timer = setTimeout(() => resolve(null), 30_000);
        child.once("exit", (code) => {
          clearTimeout(timer);
          resolve(code);
        });
      });
      child.stdin.destroy();
      if (exited === null) child.kill();
      expect(exited).toBe(0);
      expect(out).toBe("password set for piped; 0 session(s) ended\n");
      expect(await verifyPassword((await userNamed("piped"))!.passwordHash, "a brand new password")).toBe(true);
    }, 70_000);
  });
});

describe("baton push", () => {
  let server: Server;
  let url: string;
  let folder: string;
  const received: { headers: IncomingHttpHeaders; url: string | undefined; body: string }[] = [];
  const saved = { url: process.env.BATON_URL, token: process.env.BATON_TOKEN };

  beforeAll(async () => {
    // Mimics POST /api/v1/packets: stores a packet whose summary says "good", refuses the rest.
    server = createServer((request, response) => {
      let body = "";
      request.setEncoding("utf8");
      request.on("data", (chunk: string) => (body += chunk));
      request.on("end", () => {
        received.push({ headers: request.headers, url: request.url, body });
        const packet = JSON.parse(body) as { summary?: unknown };
        response.setHeader("content-type", "application/json");
        if (packet.summary === "good") {
          response.statusCode = 201;
          response.end(
            JSON.stringify({
              packet_id: "pv_test1",
              thread_key: "acme@main",
              flags: [{ code: "missing_fields", reason: "..." }, { code: "verdict_missing", reason: "..." }],
              duplicate: false,
              active: true,
            }),
          );
        } else {
          response.statusCode = 400;
          response.end(JSON.stringify({ error: { code: "invalid_fields", message: "summary accepts a string", details: null } }));
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    folder = mkdtempSync(path.join(tmpdir(), "baton-push-"));
    mkdirSync(path.join(folder, "a"));
    mkdirSync(path.join(folder, "b"));
    writeFileSync(path.join(folder, "a", "handoff.json"), JSON.stringify({ summary: "good", project: "acme", branch: "main" }));
    writeFileSync(path.join(folder, "b", "handoff.json"), JSON.stringify({ summary: 42 }));
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(folder, { recursive: true, force: true });
  });
  beforeEach(() => {
    received.length = 0;
    process.env.BATON_URL = `${url}/`;
    process.env.BATON_TOKEN = "btn_abcdefgh_0123456789abcdefghijklmnopqrstuv";
  });
  afterEach(() => {
    for (const [name, value] of [
      ["BATON_URL", saved.url],
      ["BATON_TOKEN", saved.token],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it("prints one line per file and exits non-zero when one fails", async () => {
    const good = path.join(folder, "a", "handoff.json");
    const bad = path.join(folder, "b", "handoff.json");
    const code = await main(["push", folder]);

    expect(code).toBe(1);
    expect(lines(log)).toEqual([
      `${good}: stored pv_test1 thread=acme@main flags=missing_fields,verdict_missing`,
      `${bad}: failed (HTTP 400): summary accepts a string`,
    ]);
    expect(received).toHaveLength(2);
    for (const request of received) {
      expect(request.url).toBe("/api/v1/packets");
      expect(request.headers.authorization).toBe("Bearer btn_abcdefgh_0123456789abcdefghijklmnopqrstuv");
      expect(request.headers["content-type"]).toBe("application/json");
      expect(request.headers["baton-source"]).toBe("cli");
    }
    expect(received.map((request) => JSON.parse(request.body))).toEqual([
      { summary: "good", project: "acme", branch: "main" },
      { summary: 42 },
    ]);
  });

  it("exits 0 when every file is stored", async () => {
    const good = path.join(folder, "a", "handoff.json");
    expect(await main(["push", good])).toBe(0);
    expect(lines(log)).toEqual([`${good}: stored pv_test1 thread=acme@main flags=missing_fields,verdict_missing`]);
  });

  it("reports a missing file and an unreachable server per file", async () => {
    const missing = path.join(folder, "missing.json");
    expect(await main(["push", missing])).toBe(1);
    expect(lines(log)).toEqual([expect.stringMatching(new RegExp(`^${missing.replace(/[.\\/]/g, "\\$&")}: failed: cannot read: `))]);
    log.mockClear();

    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    process.env.BATON_URL = `http://127.0.0.1:${port}`;
    expect(await main(["push", path.join(folder, "a", "handoff.json")])).toBe(1);
    expect(lines(log)[0]).toContain(`failed: cannot reach http://127.0.0.1:${port}`);
    expect(received).toHaveLength(0);
  });

  it("refuses to push without a token", async () => {
    delete process.env.BATON_TOKEN;
    expect(await main(["push", folder])).toBe(1);
    expect(lines(error).join("\n")).toContain("Set BATON_TOKEN");
    expect(received).toHaveLength(0);
  });
});

describe("baton pull", () => {
  // The real GET /api/v1/threads/{key}/handoff route (its auth, query and ETag), behind a plain HTTP server.
  let server: Server;
  let url: string;
  let folder: string;
  let readToken: string;
  let writeOnlyToken: string;
  let packetId: string;
  const served: { url: string | undefined; authorization: string | undefined; status: number; body: Buffer }[] = [];
  const saved = { url: process.env.BATON_URL, token: process.env.BATON_TOKEN };
  // Slashes, @, #, ?, % and spaces must survive as one path segment.
  const thread = "pull/acme@feat #1?x=%";
  const packet = {
    zz_custom: { b: 2, a: [1, "two", null] },
    summary: "ünïcødé pulled",
    thread,
    next_action: { action: "rerun the suite", command: "npm test" },
    changed_files: ["b.ts", "a.ts"],
    human: { revision: 9 },
    aa_custom: true,
  };
  let stdout: MockInstance<typeof process.stdout.write>;
  const printed = () => stdout.mock.calls.map((call) => String(call[0])).join("");

  beforeAll(async () => {
    server = createServer((incoming, outgoing) => {
      void (async () => {
        const match = /^\/api\/v1\/threads\/([^/?]+)\/handoff$/.exec(incoming.url ?? "");
        if (!match) {
          outgoing.writeHead(404, { "content-type": "application/json" });
          outgoing.end(JSON.stringify({ error: { code: "not_found", message: `No API route ${incoming.url}.`, details: null } }));
          return;
        }
        const headers: [string, string][] = [];
        for (const [name, value] of Object.entries(incoming.headers)) if (value !== undefined) headers.push([name, String(value)]);
        const request = new Request(`${url}${incoming.url}`, { headers });
        const response = await getHandoff(request, { params: Promise.resolve({ key: decodeURIComponent(match[1]!) }) });
        const body = Buffer.from(await response.arrayBuffer());
        served.push({ url: incoming.url, authorization: incoming.headers.authorization, status: response.status, body });
        outgoing.writeHead(response.status, Object.fromEntries(response.headers));
        outgoing.end(body);
      })();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    folder = mkdtempSync(path.join(tmpdir(), "baton-pull-"));
    readToken = (await createApiToken("pull-reader", ["packets:read"])).token;
    writeOnlyToken = (await createApiToken("pull-writer", ["packets:write"])).token;
    packetId = (await ingestPacket(packet, { kind: "http", actor: "token:test" })).packet_id;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(folder, { recursive: true, force: true });
  });
  beforeEach(() => {
    served.length = 0;
    process.env.BATON_URL = `${url}/`;
    process.env.BATON_TOKEN = readToken;
    stdout = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
  });
  afterEach(() => {
    for (const [name, value] of [
      ["BATON_URL", saved.url],
      ["BATON_TOKEN", saved.token],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  /** What `baton pull` should output for the served bytes: the same JSON, 2-space indented, newline-terminated. */
  const pretty = (body: Buffer) => `${JSON.stringify(JSON.parse(body.toString("utf8")), null, 2)}\n`;

  it("prints the merged packet the endpoint serves, indented, to stdout", async () => {
    expect(await main(["pull", thread])).toBe(0);

    expect(served).toHaveLength(1);
    expect(served[0]).toMatchObject({
      url: `/api/v1/threads/${encodeURIComponent(thread)}/handoff`,
      authorization: `Bearer ${readToken}`,
      status: 200,
    });
    expect(printed()).toBe(pretty(served[0]!.body));
    const merged = JSON.parse(printed()) as Record<string, unknown>;
    expect(Object.keys(merged)).toEqual([...Object.keys(packet).filter((key) => key !== "human"), "human"]);
    expect(merged.summary).toBe("ünïcødé pulled");
    expect(merged.human).toMatchObject({ revision: 0 });
    expect(lines(error)).toEqual([]);
  });

  it("takes --server and --token over the environment", async () => {
    process.env.BATON_URL = "http://127.0.0.1:9";
    process.env.BATON_TOKEN = writeOnlyToken;
    expect(await main(["pull", thread, "--server", url, "--token", readToken])).toBe(0);
    expect(served[0]?.authorization).toBe(`Bearer ${readToken}`);
    expect(printed()).toBe(pretty(served[0]!.body));
  });

  it("with -o writes the packet atomically: the served JSON, nothing on stdout, no temp file left", async () => {
    const out = path.join(folder, "write", "handoff.json");
    mkdirSync(path.dirname(out));
    writeFileSync(out, "an older handoff that is replaced whole");
    expect(await main(["pull", thread, "-o", out])).toBe(0);

    expect(served).toHaveLength(1);
    const text = readFileSync(out, "utf8");
    expect(text).toBe(pretty(served[0]!.body));
    expect(JSON.parse(text)).toEqual(JSON.parse(served[0]!.body.toString("utf8")));
    expect(readdirSync(path.dirname(out))).toEqual(["handoff.json"]);
    expect(printed()).toBe("");
    expect(lines(error)).toEqual([`baton pull: wrote ${out} (thread ${thread}, packet ${packetId})`]);

    expect(await main(["pull", thread, "--output", out])).toBe(0);
    expect(readFileSync(out, "utf8")).toBe(text);
    expect(readdirSync(path.dirname(out))).toEqual(["handoff.json"]);
  });

  it("prints the server's message naming the thread on a 404, and writes nothing", async () => {
    const missing = "no/such@thread";
    const out = path.join(folder, "missing.json");
    expect(await main(["pull", missing, "-o", out])).toBe(1);
    expect(served[0]?.status).toBe(404);
    expect(lines(error)).toEqual([`baton pull: failed (HTTP 404): Thread "${missing}" was not found.`]);
    expect(printed()).toBe("");
    expect(existsSync(out)).toBe(false);
  });

  it("prints the server's message for a token without packets:read, and refuses without a token", async () => {
    process.env.BATON_TOKEN = writeOnlyToken;
    expect(await main(["pull", thread])).toBe(1);
    expect(lines(error)).toEqual(['baton pull: failed (HTTP 403): This token lacks the scope "packets:read"; create one that has it.']);
    expect(printed()).toBe("");
    error.mockClear();

    delete process.env.BATON_TOKEN;
    served.length = 0;
    expect(await main(["pull", thread])).toBe(1);
    expect(lines(error).join("\n")).toContain("--token or set BATON_TOKEN");
    expect(served).toHaveLength(0);
  });

  it("reports a file it cannot write", async () => {
    const out = path.join(folder, "no-such-folder", "handoff.json");
    expect(await main(["pull", thread, "-o", out])).toBe(1);
    expect(lines(error)[0]).toMatch(new RegExp(`^baton pull: cannot write ${out.replace(/[.\\/]/g, "\\$&")}: `));
    expect(existsSync(path.dirname(out))).toBe(false);
  });

  it("documents itself in --help", async () => {
    expect(await main(["pull", "--help"])).toBe(0);
    const help = printed();
    expect(help).toContain("Usage: baton pull [options] <thread>");
    for (const text of ["-o, --output <file>", "--server <url>", "--token <token>", "BATON_TOKEN", "/api/v1/threads/{thread}/handoff"]) {
      expect(help).toContain(text);
    }
    stdout.mockClear();
    expect(await main(["--help"])).toBe(0);
    expect(printed()).toMatch(/\n {2}pull \[options\] <thread> +Print a thread's merged handoff packet/);
  });

  it("reads an endpoint that tags the bytes it serves and answers If-None-Match with 304", async () => {
    const endpoint = `${url}/api/v1/threads/${encodeURIComponent(thread)}/handoff`;
    const authorization = `Bearer ${readToken}`;
    const first = await fetch(endpoint, { headers: { authorization } });
    const body = Buffer.from(await first.arrayBuffer());
    const etag = first.headers.get("etag");
    expect(etag).toBe(`"${createHash("sha256").update(body).digest("hex")}"`);
    expect(first.headers.get("cache-control")).toBe("no-cache");
    expect(first.headers.get("baton-packet-id")).toBe(packetId);

    for (const ifNoneMatch of [etag!, `W/${etag}`, `"other", ${etag}`, "*"]) {
      const again = await fetch(endpoint, { headers: { authorization, "if-none-match": ifNoneMatch } });
      expect(again.status, ifNoneMatch).toBe(304);
      expect(again.headers.get("etag")).toBe(etag);
      expect(await again.text()).toBe("");
    }
    const stale = await fetch(endpoint, { headers: { authorization, "if-none-match": '"other"' } });
    expect(stale.status).toBe(200);
    expect(Buffer.from(await stale.arrayBuffer()).equals(body)).toBe(true);
    // Conditional or not, a request still needs a token.
    expect((await fetch(endpoint, { headers: { "if-none-match": etag! } })).status).toBe(401);
  });
});

describe("baton", () => {
  it("exits non-zero for an unknown command", async () => {
    expect(await main(["frobnicate"])).not.toBe(0);
    expect(stderr.mock.calls.map((call) => String(call[0])).join("")).toContain("unknown command 'frobnicate'");
  });

  it("exits 0 for --help", async () => {
    const stdout = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    expect(await main(["--help"])).toBe(0);
    expect(stdout.mock.calls.map((call) => String(call[0])).join("")).toContain("Usage: baton");
  });
});
