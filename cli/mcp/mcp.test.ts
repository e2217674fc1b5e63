import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inProcessFetch } from "../../app/api/v1/mcp/in-process";
import { POST as postMcp } from "../../app/api/v1/mcp/route";
import type { Person } from "../../lib/auth/roles";
import { createApiToken } from "../../lib/auth/tokens";
import { createFirstAdmin } from "../../lib/auth/users";
import { answer, decide } from "../../lib/human/actions";
import { waitRegistryStatus } from "../../lib/human/wait";
import { listOpenQuestions } from "../../lib/views/questions/inbox";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { startRouteServer, type RouteServer } from "@/testing/route-server";
import { createBatonMcpServer, mcpTuning } from "./tools";

/**
 * `baton mcp` as an agent tool starts it: a child process driven over stdio by the
 * SDK's own Client, against a real HTTP server running Baton's real routes on a real
 * database file; and the same tools over Streamable HTTP at /api/v1/mcp.
 */
freshDatabaseForThisFile();

let person: Person;
let agentToken: string;
let writeOnlyToken: string;
let server: RouteServer;
let url = "";


beforeAll(async () => {
  const admin = await createFirstAdmin({ username: "mei", password: "a long enough password" });
  person = { id: admin.id, username: admin.username, role: admin.role };
  agentToken = (await createApiToken("agent", ["packets:read", "packets:write"])).token;
  writeOnlyToken = (await createApiToken("writer", ["packets:write"])).token;
  // The MCP route beside the REST routes its tools call.
  server = await startRouteServer((request) => (new URL(request.url).pathname === "/api/v1/mcp" ? postMcp(request) : inProcessFetch(request)(request)));
  url = server.url;
});
afterAll(async () => {
  await server.close();
});

/** `baton mcp` as a child process, exactly as an agent tool runs it. */
async function stdioClient(token: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.resolve("bin/baton.js"), "mcp"],
    env: { PATH: process.env.PATH ?? "", BATON_URL: url, BATON_TOKEN: token },
    stderr: "pipe",
  });
  const client = new Client({ name: "baton-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

/** The tools `baton mcp` serves, in this process (over a linked pair of in-memory transports). */
async function inProcessClient(token: string): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createBatonMcpServer({ url, token }).connect(serverSide);
  const client = new Client({ name: "baton-test", version: "1.0.0" });
  await client.connect(clientSide);
  return client;
}

async function httpClient(token: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/api/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  const client = new Client({ name: "baton-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })) as CallToolResult & { structuredContent?: Record<string, unknown> };

const packet = (thread: string, extra: Record<string, unknown> = {}) => ({
  thread,
  agent: "claude",
  summary: "Moved the billing job to the queue.",
  next_action: "deploy to staging",
  open_risks: [{ severity: "high", risk: "retries may double-charge" }],
  ...extra,
});

describe("baton mcp over stdio", () => {
  let client: Client;
  beforeAll(async () => {
    client = await stdioClient(agentToken);
  }, 60_000);
  afterAll(async () => {
    await client.close();
  });

  it("lists the five tools, each with an input and an output schema", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(["ask", "handoff", "pull", "status", "wait_for_decision"]);
    for (const tool of tools) {
      expect(tool.description!.length).toBeGreaterThan(80);
      expect(tool.outputSchema?.type).toBe("object");
    }
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((template) => template.uriTemplate).sort()).toEqual(["baton://threads/{thread}/handoff.json", "baton://threads/{thread}/handoff.md"]);
  });

  it("hands off a valid packet, answering thread, flags, column and reason", async () => {
    const result = await call(client, "handoff", { packet: packet("mcp/acme@billing") });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ thread_key: "mcp/acme@billing", duplicate: false, column: "needs_you" });
    expect(result.structuredContent!.reason).toEqual(expect.any(String));
  });

  it("refuses an invalid packet with the fields to fix, storing nothing", async () => {
    const result = await call(client, "handoff", { packet: { thread: "mcp/acme@bad", summary: "x", open_risks: "everything", commands_run: 3 } });
    expect(result.isError).toBe(true);
    const [message, details] = (result.content[0] as { text: string }).text.split("\n");
    expect(message).toMatch(/^Not stored: .*open_risks.*Fix the fields and call handoff again\.$/);
    const { code, fields } = JSON.parse(details!) as { code: string; fields: { field: string; accepts: string }[] };
    expect(code).toBe("invalid_fields");
    expect(fields.map((problem) => problem.field).sort()).toEqual(["commands_run", "open_risks"]);
    expect(fields[0]!.accepts).toEqual(expect.any(String));
    const pulled = await call(client, "pull", { thread: "mcp/acme@bad" });
    expect(pulled.isError).toBe(true);
  });

  it("pulls the merged packet, and serves it and its handoff.md as resources", async () => {
    await call(client, "handoff", { packet: packet("mcp/acme@pull") });
    const result = await call(client, "pull", { thread: "mcp/acme@pull" });
    expect(result.structuredContent).toMatchObject({ thread_key: "mcp/acme@pull", human_revision: 0, packet: { summary: "Moved the billing job to the queue.", human: { revision: 0 } } });
    const json = await client.readResource({ uri: `baton://threads/${encodeURIComponent("mcp/acme@pull")}/handoff.json` });
    expect(JSON.parse((json.contents[0] as { text: string }).text)).toMatchObject({ next_action: "deploy to staging" });
    const markdown = await client.readResource({ uri: `baton://threads/${encodeURIComponent("mcp/acme@pull")}/handoff.md` });
    expect((markdown.contents[0] as { text: string }).text).toContain("Moved the billing job to the queue.");
  });

  it("asks a question that the inbox shows at once, and returns the answer a person gives while it waits", async () => {
    const thread = "mcp/acme@ask";
    await call(client, "handoff", { packet: packet(thread, { questions_for_human: ["Old question?"] }) });
    const asking = call(client, "ask", { thread, questions: [{ question: "Drop the legacy table now?", options: ["yes", "no"] }], wait_seconds: 30 });
    await expect.poll(() => waitRegistryStatus().waiters, { timeout: 20_000 }).toBe(1);
    const inbox = await listOpenQuestions();
    const asked = inbox.groups.find((group) => group.question === "Drop the legacy table now?")!;
    expect(asked).toMatchObject({ blocking: true, options: ["yes", "no"] });
    // The question asked earlier and still open is carried to the new version, under its id.
    expect(inbox.groups.find((group) => group.question === "Old question?")!.items[0]).toMatchObject({ question_id: "q0", packet_id: asked.items[0]!.packet_id });
    const item = asked.items[0]!;
    await answer(person, thread, { packet_id: item.packet_id, base_revision: item.base_revision, answers: [{ question_id: item.question_id, answer: "Not before March." }] });
    const result = await asking;
    expect(result.structuredContent).toMatchObject({
      status: "answered",
      packet_id: item.packet_id,
      answers: [{ question_id: item.question_id, answer: "Not before March.", by: "mei" }],
      keep_waiting: null,
    });
  });

  it("says when nobody answered yet and how to keep waiting", async () => {
    const thread = "mcp/acme@unanswered";
    await call(client, "handoff", { packet: packet(thread) });
    const first = await call(client, "ask", { thread, questions: [{ question: "Which region?", id: "region" }], wait_seconds: 0.2 });
    expect(first.structuredContent).toMatchObject({ status: "not_answered_yet", question_ids: ["region"], keep_waiting: { tool: "ask", arguments: { thread, waiting_on: { question_ids: ["region"] } } } });
    const keepWaiting = first.structuredContent!.keep_waiting as { arguments: Record<string, unknown> };
    const again = call(client, "ask", { ...keepWaiting.arguments, wait_seconds: 30 });
    await expect.poll(() => waitRegistryStatus().waiters, { timeout: 20_000 }).toBe(1);
    await answer(person, thread, { packet_id: first.structuredContent!.packet_id as string, base_revision: 0, answers: [{ question_id: "region", answer: "eu-west" }] });
    expect((await again).structuredContent).toMatchObject({ status: "answered", answers: [{ question_id: "region", answer: "eu-west" }] });
  });

  it("asks on a thread whose key came from the packet's content, without starting another", async () => {
    const handed = await call(client, "handoff", { packet: { summary: "A packet that names no thread." } });
    const thread = handed.structuredContent!.thread_key as string;
    expect(thread).toMatch(/^packet:/);
    const asked = await call(client, "ask", { thread, questions: [{ question: "Which thread is this?" }], wait_seconds: 0 });
    expect(asked.structuredContent).toMatchObject({ status: "not_answered_yet", thread_key: thread });
    expect((await call(client, "pull", { thread })).structuredContent).toMatchObject({ packet_id: asked.structuredContent!.packet_id, packet: { thread } });
  });

  it("waits for a decision and returns the approval", async () => {
    const thread = "mcp/acme@decide";
    const handed = await call(client, "handoff", { packet: packet(thread) });
    const waiting = call(client, "wait_for_decision", { thread, timeout_seconds: 30 });
    await expect.poll(() => waitRegistryStatus().waiters, { timeout: 20_000 }).toBe(1);
    await decide(person, thread, { kind: "approved", packet_id: handed.structuredContent!.packet_id as string, base_revision: 0, note: "ship it" });
    expect((await waiting).structuredContent).toMatchObject({ outcome: "approved", exit_code: 0, human: { decision: { kind: "approved", by: "mei", note: "ship it" } } });
  });

  it("lists the threads that need a person, filtered like the board", async () => {
    const result = await call(client, "status", { q: "mcp/acme@pull" });
    expect(result.structuredContent).toMatchObject({ columns: ["needs_you"], total: 1, threads: [{ thread_key: "mcp/acme@pull", column: "needs_you" }] });
  });

  it("refuses a tool whose route needs a scope the token lacks, naming the scope", async () => {
    // The tools' own code with another token: the process it runs in is the other tests' subject (a second child is about 1 CPU-s).
    const writer = await inProcessClient(writeOnlyToken);
    try {
      const result = await call(writer, "pull", { thread: "mcp/acme@pull" });
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toMatch(/HTTP 403.*packets:read/);
    } finally {
      await writer.close();
    }
  });
}, 120_000);

describe("the same tools over Streamable HTTP at /api/v1/mcp", () => {
  it("lists the tools, hands off and pulls with a bearer token", async () => {
    const client = await httpClient(agentToken);
    try {
      expect((await client.listTools()).tools).toHaveLength(5);
      const handed = await call(client, "handoff", { packet: packet("mcp/http@main") });
      expect(handed.structuredContent).toMatchObject({ thread_key: "mcp/http@main", column: "needs_you" });
      expect((await call(client, "pull", { thread: "mcp/http@main" })).structuredContent).toMatchObject({ packet: { agent: "claude" } });
    } finally {
      await client.close();
    }
  });

  it("refuses a token without packets:read before any tool runs", async () => {
    await expect(httpClient(writeOnlyToken)).rejects.toThrow(/403|packets:read/);
  });
});

describe("a waiting tool call", () => {
  it("sends progress to a client that asked for it, so a request timeout that resets on progress does not cut the wait", async () => {
    const saved = mcpTuning.progressEveryMs;
    mcpTuning.progressEveryMs = 100;
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const server = createBatonMcpServer({ url, token: agentToken });
    await server.connect(serverSide);
    const client = new Client({ name: "baton-test", version: "1.0.0" });
    await client.connect(clientSide);
    try {
      const thread = "mcp/acme@progress";
      await call(client, "handoff", { packet: packet(thread) });
      const messages: string[] = [];
      // A request timeout shorter than the wait: only the progress keeps the call alive.
      const result = (await client.callTool({ name: "ask", arguments: { thread, questions: [{ question: "Still there?" }], wait_seconds: 1.5 } }, undefined, {
        timeout: 600,
        resetTimeoutOnProgress: true,
        onprogress: (progress) => messages.push(progress.message ?? ""),
      })) as CallToolResult & { structuredContent?: Record<string, unknown> };
      expect(result.structuredContent).toMatchObject({ status: "not_answered_yet" });
      expect(messages.length).toBeGreaterThan(3);
      expect(messages[0]).toMatch(/^waiting for a person's answer \(\d+ s\)$/);
    } finally {
      mcpTuning.progressEveryMs = saved;
      await client.close();
    }
  });
});
