import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { GET } from "@/app/api/v1/board/route";
import { createApiToken } from "../auth/tokens";
import { ingestPacket } from "../ingest/ingest";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { BOARD_ETAG_CLOCK_STEP_MS } from "./board-etag";

freshDatabaseForThisFile();

let token: string;
beforeAll(async () => {
  token = (await createApiToken("board-reader", ["packets:read"])).token;
  await ingestPacket({ thread: "etag/first", summary: "first", next_action: "continue" }, { kind: "http", actor: "test" });
});

function get(query = "", headers: Record<string, string> = {}): Promise<Response> {
  return GET(new Request(`http://baton.test/api/v1/board${query}`, { headers: { authorization: `Bearer ${token}`, ...headers } }));
}

describe("GET /api/v1/board with an ETag", () => {
  // The clock stands still in a step's middle: no test crosses a step by chance.
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Math.floor(Date.now() / BOARD_ETAG_CLOCK_STEP_MS) * BOARD_ETAG_CLOCK_STEP_MS + BOARD_ETAG_CLOCK_STEP_MS / 2);
  });
  afterEach(() => vi.useRealTimers());

  it("answers 304 without a body while the ledger has not moved, and the board again once it has", async () => {
    const first = await get();
    expect(first.status).toBe(200);
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^W\/".+"$/);
    expect(first.headers.get("cache-control")).toBe("no-cache");

    const again = await get("", { "if-none-match": etag });
    expect(again.status).toBe(304);
    expect(again.headers.get("etag")).toBe(etag);
    expect(await again.text()).toBe("");

    await ingestPacket({ thread: "etag/second", summary: "second", next_action: "continue" }, { kind: "http", actor: "test" });
    const moved = await get("", { "if-none-match": etag });
    expect(moved.status).toBe(200);
    expect(moved.headers.get("etag")).not.toBe(etag);
    expect(((await moved.json()) as { total: number }).total).toBe(2);
  });

  it("a tag is for one set of filters", async () => {
    const all = (await get()).headers.get("etag")!;
    const filtered = await get("?q=second", { "if-none-match": all });
    expect(filtered.status).toBe(200);
    expect(filtered.headers.get("etag")).not.toBe(all);
    expect((await get("?q=second", { "if-none-match": filtered.headers.get("etag")! })).status).toBe(304);
  });

  it("the clock moves the tag: a board that changed by time alone is sent again", async () => {
    const etag = (await get()).headers.get("etag")!;
    vi.setSystemTime(Date.now() + BOARD_ETAG_CLOCK_STEP_MS);
    expect((await get("", { "if-none-match": etag })).status).toBe(200);
  });
});
