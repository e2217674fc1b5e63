import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { loadBoard } from "../lib/board/board";
import { boardDto } from "../lib/board/dto";
import { threadFiltersSchema } from "../lib/views/threads/filters";
import { resetConfig } from "../lib/server/config";
import { closeDatabase } from "../lib/db/client";
import { ingestPacket } from "../lib/ingest/ingest";
import { migrateDatabase } from "../lib/db/migrate/index";

// What checking the board's answer against its schema costs, against loading it; the measurement and
// its setup are in docs/decisions/031-route-definitions.md.
//   npx tsx --conditions=react-server scripts/route-output-cost.ts   (THREADS=1000 ROUNDS=20 by default)

const THREADS = Number(process.env.THREADS ?? 1000);
const ROUNDS = Number(process.env.ROUNDS ?? 20);
const SEVERITIES = ["critical", "high", "medium", "low"];

function packetFor(index: number) {
  const hoursAgo = index % 5 === 0 ? 40 : index % 7;
  return {
    thread: `cost/thread-${index}`,
    agent: `agent-${index % 34}`,
    project: `acme/project-${index % 5}`,
    branch: `feature/${index}`,
    created_at: new Date(Date.now() - hoursAgo * 3_600_000).toISOString(),
    summary: `Worked on part ${index} of the refunds queue: ${"retries, idempotency and the dead-letter path. ".repeat(8)}`,
    next_action: index % 3 === 0 ? undefined : `Finish the follow-up for part ${index}.`,
    open_risks: [0, 1, 2].map((risk) => ({ severity: SEVERITIES[(index + risk) % 4], detail: `risk ${risk} of part ${index}: ${"the migration may lock the table. ".repeat(3)}` })),
    questions_for_human: index % 4 === 0 ? [{ question: `May part ${index} ship behind a flag?`, blocking: index % 8 === 0 }] : [],
    files_touched: [`src/part-${index}/handler.ts`, `src/part-${index}/queue.ts`, `test/part-${index}.test.ts`],
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const dir = mkdtempSync(path.join(tmpdir(), "baton-output-cost-"));
try {
  process.env.DATABASE_URL = `file:${path.join(dir, "baton.db")}`;
  resetConfig();
  await migrateDatabase(process.env.DATABASE_URL);
  for (let index = 0; index < THREADS; index++) await ingestPacket(packetFor(index), { kind: "cli", actor: "cost" });
  const loads: number[] = [];
  const checks: number[] = [];
  let bytes = 0;
  let cards = 0;
  for (let round = -3; round < ROUNDS; round++) {
    const started = performance.now();
    const board = await loadBoard(threadFiltersSchema.parse({}));
    const loaded = performance.now();
    const result = boardDto.safeParse(board);
    const checked = performance.now();
    if (!result.success) throw new Error(`the board broke its schema: ${result.error.message}`);
    if (round < 0) continue;
    loads.push(loaded - started);
    checks.push(checked - loaded);
    bytes = JSON.stringify(board).length;
    cards = board.columns.reduce((sum, column) => sum + column.cards.length, 0);
  }
  const load = median(loads);
  const check = median(checks);
  console.log(`board of ${cards} cards, ${(bytes / 1024).toFixed(0)} KiB: loadBoard median ${load.toFixed(1)} ms, boardDto.safeParse median ${check.toFixed(2)} ms (${((100 * check) / load).toFixed(1)} % of the handler)`);
} finally {
  await closeDatabase();
  rmSync(dir, { recursive: true, force: true });
}
