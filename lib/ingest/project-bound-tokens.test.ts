import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { POST as postPackets } from "@/app/api/v1/packets/route";
import { POST as postSessionEvent } from "@/app/api/v1/threads/[key]/events/route";
import { GET as getThread } from "@/app/api/v1/threads/[key]/route";
import { POST as postTokens } from "@/app/api/v1/tokens/route";
import { main } from "@/cli/main";
import { SESSION_COOKIE, startSession } from "../auth/sessions";
import { createApiToken, type TokenScope } from "../auth/tokens";
import { createFirstAdmin } from "../auth/users";
import { database } from "../db/client";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { ingestPacket } from "./ingest";

/**
 * Project-bound tokens (docs/decisions/056-project-bound-tokens.md) over real HTTP: the
 * routes behind a plain node:http server, the requests sent with fetch (and `baton push`).
 */

freshDatabaseForThisFile();

let server: Server;
let url: string;
let adminCookie: string;

type Handler = (request: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response>;

/** The routes under test, by method and path. */
function route(method: string, pathname: string): { handler: Handler; params: Record<string, string> } | null {
  const thread = /^\/api\/v1\/threads\/([^/]+)(\/events)?$/.exec(pathname);
  if (method === "POST" && pathname === "/api/v1/packets") return { handler: postPackets as Handler, params: {} };
  if (method === "POST" && pathname === "/api/v1/tokens") return { handler: postTokens as Handler, params: {} };
  if (thread && method === "GET" && !thread[2]) return { handler: getThread as Handler, params: { key: decodeURIComponent(thread[1]!) } };
  if (thread && method === "POST" && thread[2]) return { handler: postSessionEvent as Handler, params: { key: decodeURIComponent(thread[1]!) } };
  return null;
}

beforeAll(async () => {
  server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => {
      void (async () => {
        const target = new URL(incoming.url ?? "/", url);
        const found = route(incoming.method ?? "GET", target.pathname);
        if (!found) {
          outgoing.writeHead(404).end();
          return;
        }
        const headers: [string, string][] = Object.entries(incoming.headers).map(([name, value]) => [name, String(value)]);
        const body = incoming.method === "GET" ? undefined : Buffer.concat(chunks);
        const response = await found.handler(new Request(target, { method: incoming.method, headers, body }), {
          params: Promise.resolve(found.params),
        });
        outgoing.writeHead(response.status, Object.fromEntries(response.headers));
        outgoing.end(Buffer.from(await response.arrayBuffer()));
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const admin = await createFirstAdmin({ username: "project-admin", password: "a long enough password" });
  adminCookie = `${SESSION_COOKIE}=${(await startSession(admin, "password")).secret}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

async function send(method: string, pathname: string, auth: Record<string, string>, body?: unknown) {
  const response = await fetch(`${url}${pathname}`, {
    method,
    headers: { ...auth, origin: url, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> & { error?: { code: string; message: string; details: Record<string, unknown> } } };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const post = (token: string, packet: unknown) => send("POST", "/api/v1/packets", bearer(token), packet);

/** A token created through POST /api/v1/tokens, as the admin page creates it. */
async function tokenFor(project: string | undefined, scopes: TokenScope[] = ["packets:write"]): Promise<string> {
  const answer = await send("POST", "/api/v1/tokens", { cookie: adminCookie }, { name: `agent of ${project ?? "any project"}`, scopes, project });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  expect((answer.body.summary as { project: unknown }).project).toBe(project ?? null);
  return answer.body.token as string;
}

const taskOnly = (summary: string) => ({ task_id: "T-001", summary, next_action: "carry on" });

describe("tokens bound to a project", () => {
  let alpha = "";
  let beta = "";
  beforeAll(async () => {
    alpha = await tokenFor("alpha");
    beta = await tokenFor("beta");
  });

  it("file the same task-only packet of two repositories on two threads, keyed by the existing rules", async () => {
    const fromAlpha = await post(alpha, taskOnly("same words in two repositories"));
    const fromBeta = await post(beta, taskOnly("same words in two repositories"));
    expect([fromAlpha.status, fromBeta.status]).toEqual([201, 201]);
    expect(fromAlpha.body).toMatchObject({ thread_key: "alpha@#T-001", duplicate: false, active: true });
    expect(fromBeta.body).toMatchObject({ thread_key: "beta@#T-001", duplicate: false, active: true });

    // The packet took the project: stored as received with it, so its content hash is its own.
    const db = await database();
    const versions = await db.packetVersion.findMany({ where: { id: { in: [fromAlpha.body.packet_id as string, fromBeta.body.packet_id as string] } } });
    expect(versions.map((version) => JSON.parse(version.receivedJson).project).sort()).toEqual(["alpha", "beta"]);
    expect(new Set(versions.map((version) => version.contentHash)).size).toBe(2);
    expect(await db.thread.count({ where: { key: "task:T-001" } })).toBe(0);
  });

  it("keep an unbound token's keys as they were", async () => {
    const unbound = await tokenFor(undefined);
    const answer = await post(unbound, taskOnly("from a token without a project"));
    expect(answer.status).toBe(201);
    expect(answer.body.thread_key).toBe("task:T-001");
  });

  it("accept a packet naming the token's own project, and refuse one naming another with 403 naming both", async () => {
    const own = await post(alpha, { project: " alpha ", branch: "main", summary: "own project", next_action: "go" });
    expect(own.status).toBe(201);
    expect(own.body.thread_key).toBe("alpha@main");

    const before = await (await database()).packetVersion.count();
    const other = await post(alpha, { repo: "beta", branch: "main", summary: "another project", next_action: "go" });
    expect(other.status).toBe(403);
    expect(other.body.error).toMatchObject({ code: "forbidden", details: { field: "repo", token_project: "alpha", packet_project: "beta" } });
    expect(other.body.error!.message).toContain('bound to project "alpha"');
    expect(other.body.error!.message).toContain('names project "beta"');
    expect(await (await database()).packetVersion.count()).toBe(before);
  });

  it("refuse to write another project's thread (or a thread of no project) named explicitly: 403 naming both", async () => {
    const db = await database();
    const betaThread = await db.thread.findUniqueOrThrow({ where: { key: "beta@#T-001" } });
    const takeover = await post(alpha, { thread: "beta@#T-001", summary: "alpha writes over beta", next_action: "none" });
    expect(takeover.status).toBe(403);
    expect(takeover.body.error).toMatchObject({
      code: "forbidden",
      details: { thread_key: "beta@#T-001", thread_project: "beta", token_project: "alpha" },
    });
    expect(takeover.body.error!.message).toContain('thread "beta@#T-001" belongs to project "beta"');
    expect((await db.thread.findUniqueOrThrow({ where: { key: "beta@#T-001" } })).activeVersionId).toBe(betaThread.activeVersionId);

    const legacy = await post(alpha, { thread: "task:T-001", summary: "alpha writes over an unbound thread", next_action: "none" });
    expect(legacy.status).toBe(403);
    expect(legacy.body.error!.message).toContain('thread "task:T-001" has no project');

    // Its own thread named explicitly is fine, and so is a new thread (it is then alpha's).
    expect((await post(alpha, { thread: "alpha@#T-001", summary: "explicit own thread", next_action: "go" })).status).toBe(201);
    const fresh = await post(alpha, { thread: "alpha-notes", summary: "a new thread", next_action: "go" });
    expect(fresh.status).toBe(201);
    expect((await db.thread.findUniqueOrThrow({ where: { key: "alpha-notes" } })).project).toBe("alpha");
  });

  it("answer each item of a batch on its own: another project's thread is a 403 item, the rest are stored", async () => {
    const answer = await post(alpha, {
      packets: [
        { thread: "beta@#T-001", summary: "not alpha's", next_action: "none" },
        { task_id: "T-002", summary: "alpha's task", next_action: "go" },
      ],
    });
    expect(answer.status).toBe(207);
    expect(answer.body.results).toMatchObject([
      { index: 0, status: 403, error: { code: "forbidden", details: { thread_project: "beta", token_project: "alpha" } } },
      { index: 1, status: 201, thread_key: "alpha@#T-002" },
    ]);
  });

  it("let an unbound token write any thread, as before", async () => {
    const unbound = await tokenFor(undefined);
    expect((await post(unbound, { thread: "beta@#T-001", summary: "unbound writes anywhere", next_action: "none" })).status).toBe(201);
  });

  it("read every project's threads: a bound packets:read token reads beta's thread", async () => {
    const reader = await tokenFor("alpha", ["packets:read"]);
    const answer = await send("GET", `/api/v1/threads/${encodeURIComponent("beta@#T-001")}`, bearer(reader));
    expect(answer.status).toBe(200);
  });

  it("report session events only on threads of their project", async () => {
    const reporter = await tokenFor("alpha", ["events:write"]);
    const own = await send("POST", `/api/v1/threads/${encodeURIComponent("alpha@#T-002")}/events`, bearer(reporter), { kind: "heartbeat" });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect((await post(beta, { task_id: "T-003", summary: "beta's task", next_action: "go" })).body.thread_key).toBe("beta@#T-003");
    const other = await send("POST", `/api/v1/threads/${encodeURIComponent("beta@#T-003")}/events`, bearer(reporter), { kind: "heartbeat" });
    expect(other.status).toBe(403);
    expect(other.body.error).toMatchObject({ code: "forbidden", details: { thread_project: "beta", token_project: "alpha" } });
  });

  it("leave the watched folder's path (no token) as it was", async () => {
    const result = await ingestPacket(taskOnly("from a watched folder"), { kind: "file", actor: "watcher" });
    expect(result.thread_key).toBe("task:T-001");
  });
});

describe("POST /api/v1/tokens with a project", () => {
  it("reads it by a packet's rules: trimmed and NFC; blank or invisible characters refused naming the field", async () => {
    const trimmed = await send("POST", "/api/v1/tokens", { cookie: adminCookie }, { name: "nfc", scopes: ["packets:write"], project: "  cafe\u0301 " });
    expect(trimmed.status).toBe(201);
    expect((trimmed.body.summary as { project: string }).project).toBe("caf\u00e9");

    for (const [project, words] of [
      ["   ", "project must not be blank"],
      ["al\u200bpha", "project contains U+200B"],
      [42, "project must be a string"],
    ] as const) {
      const refused = await send("POST", "/api/v1/tokens", { cookie: adminCookie }, { name: "bad", scopes: ["packets:write"], project });
      expect(refused.status, String(project)).toBe(400);
      expect(refused.body.error!.code).toBe("invalid_request");
      expect(refused.body.error!.message).toContain(words);
    }
    expect(await (await database()).apiToken.count({ where: { name: "bad" } })).toBe(0);
  });
});

describe("baton push with a bound token", () => {
  const saved = { url: process.env.BATON_URL, token: process.env.BATON_TOKEN };
  let folder = "";
  afterEach(() => {
    vi.restoreAllMocks();
    for (const [name, value] of [["BATON_URL", saved.url], ["BATON_TOKEN", saved.token]] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  it("prints the 403's message, naming both projects, and exits 1", async () => {
    folder = mkdtempSync(path.join(tmpdir(), "baton-bound-push-"));
    const file = path.join(folder, "handoff.json");
    writeFileSync(file, JSON.stringify({ project: "beta", summary: "pushed to the wrong project", next_action: "none" }));
    process.env.BATON_URL = url;
    process.env.BATON_TOKEN = (await createApiToken("pusher", ["packets:write"], "test", "alpha")).token;
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    expect(await main(["push", file])).toBe(1);
    expect(log.mock.calls.map((call) => call.join(" "))).toEqual([
      `${file}: failed (HTTP 403): This token is bound to project "alpha"; the packet names project "beta". Send it with a token of project "beta", or leave project out to file it under "alpha".`,
    ]);
  });
});
