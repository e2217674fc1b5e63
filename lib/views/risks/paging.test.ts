import { beforeAll, describe, expect, it } from "vitest";
import { GET } from "@/app/api/v1/risks/route";
import { createApiToken } from "../../auth/tokens";
import { ingestPacket } from "../../ingest/ingest";
import { PACKET_LIST_LIMITS } from "../../contract/schema";
import { severityRank } from "../../contract/severity";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { countStatements } from "@/testing/count-statements";
import { testsRunOnPostgresql } from "@/testing/postgresql";
import { FULL_SOAK } from "@/testing/soak";
import { riskListDto, type RiskGroupDto, type RiskListDto } from "./dto";
import { RISK_PAGE_DEFAULT, RISK_PAGE_MAX, RISK_PAGE_MAX_BYTES } from "./filters";

/**
 * GET /api/v1/risks pages in the database (docs/decisions/058-risks-paged-in-sql.md): a page's
 * reads and answer are bounded by the page, whatever the number of active risks.
 */

freshDatabaseForThisFile();

// Five packets at a packet's limit: 25,000 active risks, each its own group.
const PACKETS = 5;
const PER_PACKET = PACKET_LIST_LIMITS.open_risks;
const RISKS = PACKETS * PER_PACKET;
const BIG = 6;
const SEVERITIES = ["critical", "high", "medium", "low", "info"];
let token: string;

beforeAll(async () => {
  token = (await createApiToken("risk-reader", ["packets:read"])).token;
  const at = Date.now() - 600_000;
  for (let packet = 0; packet < PACKETS; packet++) {
    const open_risks = Array.from({ length: PER_PACKET }, (_, n) => ({ severity: SEVERITIES[n % SEVERITIES.length], detail: `paged risk P${packet}-R${n}` }));
    await ingestPacket({ thread: `paging/${packet}`, summary: "many risks", next_action: "continue", open_risks }, { kind: "http", actor: "test" }, new Date(at + packet * 1000));
  }
  // A few risks as large as a packet allows: the page's byte budget, not its row count, ends the page.
  const big = Array.from({ length: BIG }, (_, n) => ({ severity: "critical", detail: `big risk B-${n} ${"y".repeat(150_000)}` }));
  await ingestPacket({ thread: "paging/big", summary: "big risks", next_action: "continue", open_risks: big }, { kind: "http", actor: "test" }, new Date(at + PACKETS * 1000));
}, 300_000);

async function get(query: string): Promise<{ list: RiskListDto; bytes: number; status: number; text: string }> {
  const response = await GET(new Request(`http://baton.test/api/v1/risks${query}`, { headers: { authorization: `Bearer ${token}` } }));
  const text = await response.text();
  return { list: response.status === 200 ? riskListDto.parse(JSON.parse(text)) : (JSON.parse(text) as RiskListDto), bytes: Buffer.byteLength(text), status: response.status, text };
}

/** Walks every page of a query (`?...` without cursor); checks each answer's size on the way. */
async function walk(query: string, limit: number, total = RISKS + BIG): Promise<RiskGroupDto[]> {
  const seen: RiskGroupDto[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const { list, bytes, status } = await get(`?${query}${cursor ? `&cursor=${cursor}` : ""}`);
    expect(status).toBe(200);
    expect(list.total).toBe(total);
    // A group larger than the budget comes alone (here 2 x 150 KB: its detail, once as the group's, once as its thread's).
    if (list.groups.length > 1) expect(bytes).toBeLessThan(RISK_PAGE_MAX_BYTES + 4096);
    else expect(bytes).toBeLessThan(2 * 150_000 + 4096);
    expect(list.groups.reduce((sum, group) => sum + group.threads.length, 0)).toBeLessThanOrEqual(limit);
    seen.push(...list.groups);
    cursor = list.next_cursor;
    pages++;
  } while (cursor && pages < 1000);
  return seen;
}

/** The default order: regressed first, then the most severe, then the most recently seen, then by fingerprint. */
function attentionOrder(a: RiskGroupDto, b: RiskGroupDto): number {
  return (
    Number(b.regressed) - Number(a.regressed) ||
    severityRank(b.severity) - severityRank(a.severity) ||
    b.last_seen.localeCompare(a.last_seen) ||
    (a.fingerprint < b.fingerprint ? -1 : a.fingerprint > b.fingerprint ? 1 : 0)
  );
}

describe("GET /api/v1/risks, paged in the database", () => {
  it("gives a first page of the page size, reading a page's rows and not every active risk", async () => {
    const counter = testsRunOnPostgresql() ? null : countStatements();
    // Oldest first: the first page is of the many small risks, not the big ones.
    const { list, bytes } = await get("?sort=last_seen&order=asc");
    const read = counter && { statements: counter.count(), rows: counter.rows() };
    counter?.stop();
    expect(list.groups).toHaveLength(RISK_PAGE_DEFAULT);
    expect(list.total).toBe(RISKS + BIG);
    expect(list.next_cursor).not.toBeNull();
    expect(bytes).toBeLessThan(RISK_PAGE_MAX_BYTES + 4096);
    // On SQLite, what reaches the server: the groups, the counts, the page's risks and histories (and the token).
    if (read) {
      expect(read.statements).toBeLessThanOrEqual(10);
      expect(read.rows).toBeLessThan(4 * RISK_PAGE_DEFAULT);
    }
  });

  // Every page sorts the view in the database (about half a second at 25,000 risks here): npm test walks one
  // packet's 5,000, npm run test:soak all 25,006.
  it(`walks every group exactly once, in the list's order, each answer within its budget (${FULL_SOAK ? "all" : "one packet's"})`, async () => {
    const expected = FULL_SOAK ? RISKS + BIG : PER_PACKET;
    const seen = await walk(`limit=${RISK_PAGE_MAX}${FULL_SOAK ? "" : "&q=P0-"}`, RISK_PAGE_MAX, expected);
    expect(seen).toHaveLength(expected);
    expect(new Set(seen.map((group) => group.fingerprint)).size).toBe(expected);
    expect(seen.map((group) => group.fingerprint)).toEqual([...seen].sort(attentionOrder).map((group) => group.fingerprint));
  }, 240_000);

  it("sends a risk larger than a page's budget alone, first: the most severe and most recent", async () => {
    const { list, bytes } = await get("");
    expect(list.groups).toHaveLength(1);
    expect(list.groups[0]!.detail).toMatch(/^big risk/);
    expect(bytes).toBeLessThan(2 * 150_000 + 4096);
  });

  it("walks a column's order the same way: by detail, A to Z (one packet's risks numbered 1...)", async () => {
    const seen = await walk(`limit=50&sort=detail&order=asc&q=P0-R1`, 50, 1111);
    expect(new Set(seen.map((group) => group.fingerprint)).size).toBe(1111);
    // Every detail here is ASCII: the database's order and JavaScript's agree.
    const keys = seen.map((group) => group.detail.slice(0, 64).toLowerCase());
    expect(keys).toEqual([...keys].sort());
  }, 240_000);

  it("refuses a cursor it did not give, one of another order, and a limit out of range", async () => {
    const bad = await get("?cursor=bm90LWEtY3Vyc29y");
    expect(bad.status).toBe(400);
    expect(bad.text).toContain("cursor");
    const first = await get("?limit=5");
    expect((await get(`?limit=5&sort=detail&cursor=${first.list.next_cursor}`)).status).toBe(400);
    expect((await get(`?limit=${RISK_PAGE_MAX + 1}`)).status).toBe(400);
    expect((await get("?limit=0")).status).toBe(400);
    expect((await get("?sort=colour")).status).toBe(400);
  });
});
