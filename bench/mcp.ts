/**
 * bench:mcp: how long after a person's answer the MCP `ask` tool call returns.
 *
 * In this process: a real HTTP server running Baton's route handlers (the same
 * in-process dispatch /api/v1/mcp uses) on a fresh SQLite file (or, with
 * DATABASE_URL=postgresql://..., a database of the run's own, dropped at the end).
 * `baton mcp` runs as a child process driven over stdio by the SDK's Client, as an agent
 * tool runs it. Each run hands off a thread, calls `ask`, and once the call waits, a
 * person answers (lib/human/actions.ts, what the inbox's button calls); the figure is
 * the time from the answer's commit to the tool call's return. The baseline, measured the
 * same way in the same run, is the waiting read alone (GET .../handoff?wait=, what `ask`
 * waits with), so the ratio is what MCP, the child process and the tool add.
 *
 * Env: BENCH_RUNS (10). Target: the median and p95 under 1 s.
 */
import path from "node:path";
import { performance } from "node:perf_hooks";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { chooseDatabase, cleanUpDatabase, ROOT } from "./lib/server";
import { fixed, formatTable, positiveNumber, verdict } from "./lib/report";
import { inProcessFetch } from "../app/api/v1/mcp/in-process";
import { startRouteServer } from "../testing/route-server";
import { createApiToken } from "../lib/auth/tokens";
import { createFirstAdmin } from "../lib/auth/users";
import { closeDatabase } from "../lib/db/client";
import { migrateDatabase } from "../lib/db/migrate/index";
import { answer } from "../lib/human/actions";
import { waitRegistryStatus } from "../lib/human/wait";
import { resetConfig } from "../lib/server/config";
import { ingestPacket } from "../lib/ingest/ingest";

const TARGET_MS = 1_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;


async function untilWaiting(): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (waitRegistryStatus().waiters < 1) {
    if (Date.now() > deadline) throw new Error("the tool call never reached its waiting read");
    await sleep(5);
  }
}

function summarise(label: string, times: number[]): string[] {
  const sorted = [...times].sort((a, b) => a - b);
  return [label, String(sorted.length), fixed(percentile(sorted, 50), 0), fixed(percentile(sorted, 95), 0), fixed(sorted.at(-1)!, 0)];
}

async function main(): Promise<void> {
  const runs = positiveNumber("BENCH_RUNS", 10, true);
  const database = await chooseDatabase(`mcp_${Date.now().toString(36)}`, false);
  process.env.DATABASE_URL = database.url;
  process.env.BATON_RATE_LIMIT_PER_MINUTE = "0";
  resetConfig();
  await migrateDatabase(database.url);
  const admin = await createFirstAdmin({ username: "bench", password: "a long enough password" });
  const person = { id: admin.id, username: admin.username, role: admin.role };
  const token = (await createApiToken("bench-agent", ["packets:read", "packets:write"])).token;

  const server = await startRouteServer((request) => inProcessFetch(request)(request));
  const url = server.url;
  const client = new Client({ name: "bench-mcp", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [path.join(ROOT, "bin/baton.js"), "mcp"],
      env: { PATH: process.env.PATH ?? "", BATON_URL: url, BATON_TOKEN: token },
      stderr: "ignore",
    }),
  );
  console.log(`bench:mcp: ${runs} runs on ${database.description}; baton mcp over stdio against ${url}`);

  const mcp: number[] = [];
  const baseline: number[] = [];
  try {
    for (let run = 0; run < runs; run++) {
      // The baseline: a waiting read alone, woken by the same kind of answer.
      const plain = `bench/plain@${run}`;
      const stored = await ingestPacket({ thread: plain, summary: "bench", questions_for_human: ["Go on?"] }, { kind: "cli", actor: "bench" });
      const read = fetch(`${url}/api/v1/threads/${encodeURIComponent(plain)}/handoff?after=0&wait=60`, { headers: { authorization: `Bearer ${token}` } }).then(async (response) => {
        await response.arrayBuffer();
        return performance.now();
      });
      await untilWaiting();
      await answer(person, plain, { packet_id: stored.packet_id, base_revision: 0, answers: [{ question_id: "q0", answer: "yes" }] });
      const answeredPlain = performance.now();
      baseline.push((await read) - answeredPlain);

      const thread = `bench/mcp@${run}`;
      await client.callTool({ name: "handoff", arguments: { packet: { thread, summary: "bench", next_action: "wait" } } });
      const asking = client.callTool({ name: "ask", arguments: { thread, questions: [{ question: "Go on?", id: "go" }], wait_seconds: 60 } }, undefined, { timeout: 90_000 }).then((result) => ({
        result: result as CallToolResult,
        at: performance.now(),
      }));
      await untilWaiting();
      const pulled = await fetch(`${url}/api/v1/threads/${encodeURIComponent(thread)}/handoff`, { headers: { authorization: `Bearer ${token}` } });
      const packetId = pulled.headers.get("baton-packet-id")!;
      await pulled.arrayBuffer();
      await answer(person, thread, { packet_id: packetId, base_revision: 0, answers: [{ question_id: "go", answer: "yes" }] });
      const answered = performance.now();
      const { result, at } = await asking;
      if ((result.structuredContent as { status?: string } | undefined)?.status !== "answered") throw new Error(`ask did not return the answer: ${JSON.stringify(result.content)}`);
      mcp.push(at - answered);
    }
  } finally {
    await client.close();
    await server.close();
    await closeDatabase();
    await cleanUpDatabase(database);
  }

  console.log("\nfrom a person's answer (committed) to the return, ms\n");
  console.log(formatTable(["what", "runs", "median", "p95", "max"], [summarise("waiting read alone (baseline)", baseline), summarise("MCP ask tool call", mcp)]));
  const sortedMcp = [...mcp].sort((a, b) => a - b);
  const sortedBase = [...baseline].sort((a, b) => a - b);
  const median = percentile(sortedMcp, 50);
  const p95 = percentile(sortedMcp, 95);
  console.log(`\nmedian ratio to the baseline: ${fixed(median / Math.max(1, percentile(sortedBase, 50)), 2)}x`);
  console.log(`target: answer to return under ${TARGET_MS} ms: median ${fixed(median, 0)} ms ${verdict(median < TARGET_MS)}, p95 ${fixed(p95, 0)} ms ${verdict(p95 < TARGET_MS)}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
