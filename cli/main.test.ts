import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import { authenticateBearer, listApiTokens } from "../lib/auth/tokens";
import { database } from "../lib/db";
import { BatonError } from "../lib/errors";
import { freshDatabaseForThisFile } from "../lib/testing/temp-database";
import { main } from "./main";

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
    expect(listed).toMatch(new RegExp(`^${display.replace(/\./g, "\\.")}  to-revoke  packets:write  last used never$`));
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

  it("fails to revoke an unknown token", async () => {
    expect(await main(["token", "revoke", "btn_unknown0"])).toBe(1);
    expect(lines(error).join("\n")).toContain('No token matches "btn_unknown0"');
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
