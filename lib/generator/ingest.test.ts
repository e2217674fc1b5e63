import { readFile } from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import { loadBoard } from "../board/board";
import { database } from "../db/client";
import { ingestPacket } from "../ingest/ingest";
import { SEVERITIES } from "../contract/severity";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { threadFiltersSchema } from "../views/threads/filters";
import { generateHandoff } from "./generate";
import { buildSupersedingScenario, SCENARIOS, type Scenario } from "@/testing/generator/scenarios";
import type { TestWorkbench } from "@/testing/generator/workbench";

freshDatabaseForThisFile();

const benches: TestWorkbench[] = [];
afterAll(async () => {
  await Promise.all(benches.map((bench) => bench.remove()));
});

// Received a minute after the fixtures' created_at, and the board read a minute later: nothing is stale or skewed.
const RECEIVED_AT = new Date("2026-11-20T09:01:00Z");
const BOARD_NOW = Date.parse("2026-11-20T09:02:00Z");

/** Generates the scenario's packet and ingests its file as a watched folder would (so the board reads its reports). */
async function generateAndIngest(bench: TestWorkbench, scenario: Pick<Scenario, "k" | "allowDirty">) {
  const result = await generateHandoff({ root: bench.root, k: scenario.k ?? 5, allowDirty: scenario.allowDirty ?? false });
  if (result.refused) throw new Error("refused");
  const file = result.files[0]!.path;
  const body = JSON.parse(await readFile(file, "utf8")) as unknown;
  const ingested = await ingestPacket(body, { kind: "file", actor: "test", sourcePath: file, workspaceRoot: bench.root }, RECEIVED_AT);
  return { result, ingested };
}

async function placedCard(threadKey: string) {
  const board = await loadBoard(threadFiltersSchema.parse({}), { now: BOARD_NOW });
  const placed = board.columns.flatMap((column) => column.cards.filter((card) => card.key === threadKey).map((card) => ({ column: column.id, card })));
  expect(placed).toHaveLength(1);
  return placed[0]!;
}

describe("generated packets in Baton", () => {
  for (const scenario of SCENARIOS) {
    it(`${scenario.name}: ingests with flags ${scenario.expected.flags.join(", ") || "none"}, in ${scenario.expected.column}`, async () => {
      const bench = await scenario.build();
      benches.push(bench);
      const { result, ingested } = await generateAndIngest(bench, scenario);

      expect(ingested).toMatchObject({ thread_key: result.threadKey, duplicate: false, active: true });
      expect(ingested.flags.map((flag) => flag.code).sort()).toEqual([...scenario.expected.flags].sort());
      const { column, card } = await placedCard(result.threadKey);
      expect(column).toBe(scenario.expected.column);
      const counts = Object.fromEntries(SEVERITIES.map((severity) => [severity, scenario.expected.risks[severity] ?? 0]));
      expect(card.active_packet.risk_counts).toEqual(counts);
      // Every generated risk carries a severity word Baton knows: nothing is flagged unknown_severity.
      const rows = await (await database()).risk.findMany({ where: { versionId: ingested.packet_id } });
      expect(rows.every((row) => row.severityRaw !== null && row.severity === row.severityRaw)).toBe(true);
    });
  }

  it("superseding: the new packet becomes the thread's active one, ahead of the earlier packet from disk", async () => {
    const { bench } = await buildSupersedingScenario();
    benches.push(bench);
    const earlier = JSON.parse(await readFile(`${bench.root}/outputs/handoff/sess-earlier/handoff.json`, "utf8")) as unknown;
    const first = await ingestPacket(earlier, { kind: "cli", actor: "test" }, new Date("2026-11-19T17:01:00Z"));
    const { result, ingested } = await generateAndIngest(bench, {});
    expect(ingested.thread_key).toBe(first.thread_key);
    expect(ingested.active).toBe(true);
    // The rewritten earlier file (status superseded) arriving late stays superseded.
    const rewritten = JSON.parse(await readFile(result.superseded[0]!, "utf8")) as unknown;
    expect((await ingestPacket(rewritten, { kind: "cli", actor: "test" }, new Date("2026-11-20T09:01:30Z"))).active).toBe(false);
    const { column, card } = await placedCard(result.threadKey);
    expect([column, card.active_packet.id]).toEqual(["needs_you", ingested.packet_id]);
    expect(ingested.flags.map((flag) => flag.code)).toEqual(["verdict_failed"]);
  });
});
