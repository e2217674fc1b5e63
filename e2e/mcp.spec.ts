import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createToken, revokeToken, expect, test } from "./support/fixtures";
import { bearer, packetFor, uniqueId } from "./support/api";

/**
 * An agent's MCP client starts `baton mcp` (stdio) against the running app and asks a
 * person a question; the person answers in the questions inbox in Chromium while the
 * tool call waits; the call returns the answer. The latency figure is bench/mcp.ts's.
 */

/** The tool waits this long; the answer must come back well inside it. */
const ASK_WAIT_SECONDS = 120;

test("ask waits in baton mcp until a person answers in the questions inbox, then returns the answer", async ({ page, request, baseURL, agentToken }) => {
  const client = new Client({ name: "e2e-agent", version: "1.0.0" });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.resolve("bin/baton.js"), "mcp"],
    env: { PATH: process.env.PATH ?? "", BATON_URL: baseURL!, BATON_TOKEN: agentToken },
    stderr: "pipe",
  });
  // Its log (stderr), for the failure message.
  let log = "";
  transport.stderr!.on("data", (chunk: Buffer) => (log += chunk.toString("utf8")));
  await client.connect(transport);
  try {
    const thread = uniqueId("mcp-ask");
    const handed = (await client.callTool({ name: "handoff", arguments: { packet: packetFor(thread, { agent: "mcp-agent" }) } })) as CallToolResult;
    expect(handed.isError, `${JSON.stringify(handed.content)}\n${log}`).toBeFalsy();

    const question = `${thread}: drop the legacy table now?`;
    const asking = client.callTool(
      { name: "ask", arguments: { thread, questions: [{ question, options: ["yes", "not yet"] }], wait_seconds: ASK_WAIT_SECONDS } },
      undefined,
      { timeout: (ASK_WAIT_SECONDS + 30) * 1000 },
    ) as Promise<CallToolResult>;
    const returned = asking.then((result) => ({ result, at: performance.now() }));

    // Asked: stored as a new version of the thread, so in the inbox's own answer (then the page).
    const inbox = async () => JSON.stringify(await (await request.get("/api/v1/questions", { headers: bearer(agentToken) })).json());
    await expect.poll(inbox, { timeout: 20_000, message: log }).toContain(question);
    await page.goto("/questions");
    await expect(page.getByText("live", { exact: true })).toBeVisible();
    const group = page.getByTestId("question-group").filter({ hasText: question });
    await expect(group).toBeVisible();
    const clicked = performance.now();
    await group.getByRole("group", { name: "Offered answers" }).getByRole("button", { name: "not yet" }).click();

    const { result, at } = await returned;
    const afterClickMs = at - clicked;
    console.log(`ask returned ${afterClickMs.toFixed(0)} ms after the click`);
    expect(result.isError, `${JSON.stringify(result.content)}\n${log}`).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      status: "answered",
      thread_key: thread,
      answers: [expect.objectContaining({ question, answer: "not yet", by: "admin" })],
      keep_waiting: null,
    });
    // Well inside the tool's own wait: the answer woke it, the wait did not run out.
    expect(afterClickMs).toBeLessThan((ASK_WAIT_SECONDS * 1000) / 4);
  } finally {
    await client.close();
  }
});

test("the same tools over Streamable HTTP at /api/v1/mcp of the running app; a token without packets:read is refused", async ({ baseURL, agentToken }) => {
  const connect = async (token: string) => {
    const client = new Client({ name: "e2e-remote-agent", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL("/api/v1/mcp", baseURL), { requestInit: { headers: bearer(token) } }));
    return client;
  };
  const writeOnly = await createToken(`e2e-mcp-writer-${process.pid}`, ["packets:write"]);
  try {
    await expect(connect(writeOnly)).rejects.toThrow(/403|packets:read/);
  } finally {
    await revokeToken(writeOnly);
  }

  const client = await connect(agentToken);
  try {
    expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(["ask", "handoff", "pull", "status", "wait_for_decision"]);
    const thread = uniqueId("mcp-http");
    const handed = (await client.callTool({ name: "handoff", arguments: { packet: packetFor(thread) } })) as CallToolResult;
    expect(handed.structuredContent).toMatchObject({ thread_key: thread, duplicate: false });
    const pulled = (await client.callTool({ name: "pull", arguments: { thread } })) as CallToolResult;
    expect(pulled.structuredContent).toMatchObject({ thread_key: thread, human_revision: 0, packet: { thread, human: { revision: 0 } } });
  } finally {
    await client.close();
  }
});
