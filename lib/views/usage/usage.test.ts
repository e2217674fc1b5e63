import { describe, expect, it } from "vitest";
import { database } from "../../db/client";
import { ingestPacket } from "../../ingest/ingest";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { createBudget, crossedBudgets, loadUsage } from "./usage";
import { loadBoard } from "../../board/board";
import { parseInput } from "../../core/parse-input";
import { threadFiltersSchema } from "../threads/filters";

freshDatabaseForThisFile();

const NOW = new Date(Date.UTC(2026, 11, 1, 18, 0, 0));
const daysAgo = (days: number, hour = 12) => new Date(Date.UTC(2026, 11, 1 - days, hour, 0, 0));
let serial = 0;

async function send(project: string, agent: string, usage: Record<string, unknown>, receivedAt: Date) {
  const thread = `${project}/t${++serial}`;
  await ingestPacket({ thread, project, agent, summary: `s${serial}`, next_action: "n", usage }, { kind: "http", actor: "test" }, receivedAt);
  return thread;
}

describe("usage totals", () => {
  it("sum the packets' usage per agent, project and day, per currency", async () => {
    const packets = [
      { project: "sum/a", agent: "ann", usage: { input_tokens: 1000, output_tokens: 200, cost: 0.5, duration_ms: 60_000 }, at: daysAgo(0) },
      { project: "sum/a", agent: "bob", usage: { prompt_tokens: 300, completion_tokens: 40, total_cost_usd: 0.25 }, at: daysAgo(1) },
      { project: "sum/b", agent: "ann", usage: { input_tokens: 10, output_tokens: 5, cost: 1.25, duration_seconds: 3 }, at: daysAgo(1) },
      { project: "sum/b", agent: "ann", usage: { cost: { amount: 2, currency: "eur" } }, at: daysAgo(2) },
      // Older than the window asked for: left out.
      { project: "sum/a", agent: "ann", usage: { cost: 100 }, at: daysAgo(40) },
    ];
    for (const packet of packets) await send(packet.project, packet.agent, packet.usage, packet.at);

    const usage = await loadUsage({ days: 30, project: undefined }, NOW);
    const usd = (rows: typeof usage.by_agent, key: string) => rows.find((row) => row.key === key && row.currency === "USD");
    expect(usd(usage.by_agent, "ann")).toEqual({ key: "ann", currency: "USD", packets: 2, input_tokens: 1010, output_tokens: 205, cost: 1.75, duration_ms: 63_000 });
    expect(usd(usage.by_agent, "bob")).toMatchObject({ packets: 1, input_tokens: 300, output_tokens: 40, cost: 0.25 });
    expect(usage.by_agent.find((row) => row.currency === "EUR")).toMatchObject({ key: "ann", cost: 2 });
    expect(usd(usage.by_project, "sum/a")).toMatchObject({ packets: 2, cost: 0.75 });
    expect(usd(usage.by_project, "sum/b")).toMatchObject({ packets: 1, cost: 1.25 });
    expect(usage.by_day.filter((row) => row.currency === "USD").map((row) => [row.key, row.cost])).toEqual([
      ["2026-11-30", 1.5],
      ["2026-12-01", 0.5],
    ]);

    // The totals are the packets' own sums, read back from what was stored.
    const versions = await (await database()).packetVersion.findMany({ where: { project: { startsWith: "sum/" } }, select: { canonicalJson: true, receivedAt: true } });
    const stored = versions
      .filter((version) => version.receivedAt >= daysAgo(29, 0))
      .map((version) => (JSON.parse(version.canonicalJson) as { usage?: { cost?: { amount: number; currency: string } } }).usage?.cost)
      .filter((cost) => cost?.currency === "USD");
    const allUsd = usage.by_project.filter((row) => row.currency === "USD").reduce((sum, row) => sum + row.cost, 0);
    expect(allUsd).toBeCloseTo(stored.reduce((sum, cost) => sum + cost!.amount, 0), 10);
  });
});

describe("a card's usage", () => {
  it("is what its active packet reported", async () => {
    const thread = await send("card/a", "ann", { input_tokens: 1500, output_tokens: 20, cost: 0.3, model: "m-2", duration_seconds: 90 }, daysAgo(0));
    const board = await loadBoard(parseInput(threadFiltersSchema, {}, "query"), { keys: [thread] });
    expect(board.columns.flatMap((column) => column.cards)[0]?.usage).toEqual({
      input_tokens: 1500,
      output_tokens: 20,
      cost: { amount: 0.3, currency: "USD" },
      model: "m-2",
      duration_ms: 90_000,
    });
  });
});

describe("budgets", () => {
  it("a crossing records exactly one budget_crossed event per budget per period", async () => {
    const project = "budget/x";
    const daily = await createBudget("ada", { project, period: "day", amount: 1, currency: "USD" });
    const monthly = await createBudget("ada", { project, period: "month", amount: 2.5, currency: "USD" });
    expect(daily).toMatchObject({ spent: 0, crossed: false });

    const today = (hour: number) => new Date(Date.UTC(2026, 11, 1, hour, 0, 0));
    await send(project, "ann", { cost: 0.6 }, today(9));
    const crossings = async () => (await database()).ledgerEvent.findMany({ where: { kind: "budget_crossed" }, orderBy: { seq: "asc" } });
    expect(await crossings()).toHaveLength(0);
    // 0.6 + 0.6 crosses the day's 1.00; more spending the same day adds no second event.
    await send(project, "ann", { cost: 0.6 }, today(10));
    await send(project, "ann", { cost: 0.6 }, today(11));
    // The month's 2.50 is crossed by the fourth packet.
    await send(project, "ann", { cost: 0.9 }, today(12));
    await send(project, "ann", { cost: 0.1 }, today(13));
    const events = (await crossings()).map((event) => JSON.parse(event.data) as { budget_id: string; period_start: string });
    expect(events.map((event) => [event.budget_id, event.period_start])).toEqual([
      [daily.id, "2026-12-01"],
      [monthly.id, "2026-12-01"],
    ]);
    // The next day is a new period for the daily budget only.
    const tomorrow = new Date(Date.UTC(2026, 11, 2, 9, 0, 0));
    await send(project, "ann", { cost: 1.5 }, tomorrow);
    const after = (await crossings()).map((event) => JSON.parse(event.data) as { budget_id: string; period_start: string });
    expect(after.slice(2).map((event) => [event.budget_id, event.period_start])).toEqual([[daily.id, "2026-12-02"]]);
    // The notice: this day's crossing and this month's; yesterday's daily crossing is over.
    expect((await crossedBudgets(tomorrow)).map((budget) => [budget.id, Math.round(budget.spent * 100) / 100])).toEqual([
      [daily.id, 1.5],
      [monthly.id, 2.7],
    ]);
  });
});
