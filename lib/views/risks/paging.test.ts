import { beforeAll, describe, expect, it } from "vitest";
import { GET } from "@/app/api/v1/risks/route";
import { createApiToken } from "../../auth/tokens";
import { ingestPacket } from "../../ingest/ingest";
import { PACKET_LIST_LIMITS } from "../../contract/schema";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { countStatements } from "@/testing/count-statements";
import { testsRunOnPostgresql } from "@/testing/postgresql";
import { soakSize } from "@/testing/soak";
import { riskListDto, type RiskListDto } from "./dto";
import { RISK_PAGE_DEFAULT, RISK_PAGE_MAX, RISK_PAGE_MAX_BYTES } from "./filters";
import { listRisks } from "./queries";

/** GET /api/v1/risks pages by cursor: bounded answers, whatever the packets hold. */

freshDatabaseForThisFile();

// A view's first page reads every active risk (the next pages reuse its sorted list while the ledger
// stands still), so npm test pages 600 a packet, npm run test:soak a packet's limit.
const N = soakSize(600, PACKET_LIST_LIMITS.open_risks);
const SEVERITIES = ["critical", "high", "medium", "low"];
let token: string;

/** Packets as large as a packet's list may be: the second shares half its risks with the first (two-thread groups). */
beforeAll(async () => {
  token = (await createApiToken("risk-reader", ["packets:read"])).token;
  const risks = (from: number) =>
    Array.from({ length: N }, (_, n) => ({ severity: SEVERITIES[(from + n) % SEVERITIES.length], detail: `paged risk R-${from + n} ${"x".repeat(80)}` }));
  const at = Date.now() - 60_000;
  await ingestPacket({ thread: "paging/one", summary: "many risks", next_action: "continue", open_risks: risks(0) }, { kind: "http", actor: "test" }, new Date(at));
  await ingestPacket({ thread: "paging/two", summary: "many risks", next_action: "continue", open_risks: risks(N / 2) }, { kind: "http", actor: "test" }, new Date(at + 1000));
  // A few risks as large as a packet allows: the page's byte budget, not its row count, ends the page.
  const big = Array.from({ length: 6 }, (_, n) => ({ severity: "critical", detail: `big risk B-${n} ${"y".repeat(150_000)}` }));
  await ingestPacket({ thread: "paging/big", summary: "big risks", next_action: "continue", open_risks: big }, { kind: "http", actor: "test" }, new Date(at + 2000));
}, 120_000);

async function get(query: string): Promise<{ list: RiskListDto; bytes: number; status: number }> {
  const response = await GET(new Request(`http://baton.test/api/v1/risks${query}`, { headers: { authorization: `Bearer ${token}` } }));
  const text = await response.text();
  return { list: response.status === 200 ? riskListDto.parse(JSON.parse(text)) : (JSON.parse(text) as RiskListDto), bytes: Buffer.byteLength(text), status: response.status };
}

const rowsOf = (list: RiskListDto) => list.groups.reduce((sum, group) => sum + group.threads.length, 0);

describe("GET /api/v1/risks, paged", () => {
  it.each([["", RISK_PAGE_DEFAULT], [`?limit=${RISK_PAGE_MAX}`, RISK_PAGE_MAX]])(
    "%s: every group once, in the list's order, each answer bounded",
    async (query, limit) => {
      const all = await listRisks();
      expect(all.groups.length).toBe(N * 1.5 + 6);
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const separator = query ? "&" : "?";
        const { list, bytes, status } = await get(`${query}${cursor ? `${query ? separator : "?"}cursor=${cursor}` : ""}`);
        expect(status).toBe(200);
        expect(list.total).toBe(all.groups.length);
        // A group larger than the budget comes alone (here 2 x 150 KB: its detail, once as the group's, once as its thread's).
        if (list.groups.length > 1) expect(bytes).toBeLessThan(RISK_PAGE_MAX_BYTES + 4096);
        else expect(bytes).toBeLessThan(2 * 150_000 + 4096);
        expect(rowsOf(list)).toBeLessThanOrEqual(limit);
        seen.push(...list.groups.map((group) => group.fingerprint));
        cursor = list.next_cursor;
        pages++;
      } while (cursor && pages < 10_000);
      expect(seen).toEqual(all.groups.map((group) => group.fingerprint));
    },
    120_000,
  );

  it("reads the risks for a view's first page only: the next pages reuse its sorted list until the ledger moves", async () => {
    const first = await listRisks({ limit: 10 });
    const counter = testsRunOnPostgresql() ? null : countStatements();
    const second = await listRisks({ limit: 10, cursor: first.next_cursor! });
    const statements = counter?.count();
    counter?.stop();
    if (statements !== undefined) expect(statements).toBe(1); // the ledger's head
    expect(second.groups[0]!.fingerprint).not.toBe(first.groups[0]!.fingerprint);
    // A packet moves the ledger: the next page is read anew and shows it.
    await ingestPacket(
      { thread: "paging/late", summary: "late", next_action: "continue", open_risks: [{ severity: "critical", detail: "a late critical risk" }] },
      { kind: "http", actor: "test" },
    );
    const fresh = await listRisks({ limit: 10 });
    expect(fresh.total).toBe(first.total + 1);
    expect(fresh.groups.some((group) => group.detail === "a late critical risk")).toBe(true);
  });

  it("refuses a cursor it did not give and a limit out of range", async () => {
    const bad = await get("?cursor=bm90LWEtY3Vyc29y");
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.list)).toContain("cursor");
    expect((await get(`?limit=${RISK_PAGE_MAX + 1}`)).status).toBe(400);
    expect((await get("?limit=0")).status).toBe(400);
  });
});
