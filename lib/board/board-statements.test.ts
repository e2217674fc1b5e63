import { describe, expect, it } from "vitest";
import { statementsOf } from "@/testing/count-statements";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { eventsAfter, headSeq } from "@/testing/ledger-deltas";
import { ingestPacket } from "../ingest/ingest";
import { threadFiltersSchema } from "../views/threads/filters";
import { loadBoard } from "./board";
import { computeBoardDelta } from "./board-delta";

freshDatabaseForThisFile();

const http = { kind: "http", actor: "test" } as const;
const filters = threadFiltersSchema.parse({});

let minute = 0;
async function send(thread: string, fields: Record<string, unknown> = {}) {
  minute++;
  await ingestPacket(
    {
      thread,
      summary: `work on ${thread}`,
      next_action: `next for ${thread} #${minute}`,
      created_at: new Date(Date.now() - (200 - minute) * 60_000).toISOString(),
      project: "acme",
      branch: "main",
      ...fields,
    },
    http,
  );
}

// The delta path places one card (and its project/branch peers) for each batch of ledger events, per set of filters.
describe("statements of one card's placing", () => {
  it("stay few, whatever the board's size", async () => {
    for (let n = 0; n < 12; n++) await send(`peer/${n}`, { topic: n < 2 ? "shared" : `topic ${n}`, open_risks: [{ detail: `risk ${n}`, severity: "high" }], usage: { input_tokens: 10 * n, output_tokens: n } });
    for (let n = 0; n < 12; n++) await send(`other/${n}`, { project: "other", branch: `b${n}`, last_known_good_commit: `c${n}` });
    // Warm: the verdict and commit-history caches hold every card, as on a running server.
    await loadBoard(filters);
    await loadBoard(filters, { keys: ["peer/0"] });
    const oneCard = await statementsOf(() => loadBoard(filters, { keys: ["peer/0"] }));
    const filtered = threadFiltersSchema.parse({ project: "acme" });
    await loadBoard(filtered, { keys: ["peer/0"] });
    const oneFilteredCard = await statementsOf(() => loadBoard(filtered, { keys: ["peer/0"] }));
    const wholeBoard = await statementsOf(() => loadBoard(filters));
    const from = await headSeq();
    await send("peer/0", { topic: "shared" });
    const events = await eventsAfter(from);
    const delta = await statementsOf(() => computeBoardDelta(events, filters));
    // The card rows, its risks, the threads around it, the ledger's head (the commit-history cache's check).
    expect(oneCard).toBe(4);
    // A filter adds one: the matching keys, read with Prisma's filter (lib/views/threads/queries.ts filterWhere).
    expect(oneFilteredCard).toBe(5);
    // None per card on the whole board either: its cards are every active thread, which the watchdog's check covers.
    expect(wholeBoard).toBe(3);
    // The same, plus the changed card's commit history: the threads that got a packet since (the cache
    // forgets them) come with the ledger's head, in one statement.
    expect(delta).toBe(5);
  });
});
