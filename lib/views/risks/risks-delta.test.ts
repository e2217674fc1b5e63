import { beforeAll, describe, expect, it } from "vitest";
import type { Person } from "../../auth/roles";
import { createFirstAdmin } from "../../auth/users";
import { eventsAfter, headSeq } from "@/testing/ledger-deltas";
import { riskFingerprint } from "../../contract/fingerprint";
import { ingestPacket } from "../../ingest/ingest";
import { applyRisksDelta } from "../../browser/risks-delta";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { expectBatonError } from "@/testing/expect-baton-error";
import type { RiskListDto } from "./dto";
import { riskFiltersSchema, type RiskFilters } from "./filters";
import { listRisks } from "./queries";
import { computeRisksDelta, risksStreamFilters } from "./risks-delta";
import { triageRisks } from "./triage";

/** The risks list's stream deltas, applied as the browser applies them, give what a fresh read gives. */

freshDatabaseForThisFile();

let person: Person;
beforeAll(async () => {
  person = await createFirstAdmin({ username: "risks-delta-admin", password: "a long enough password" });
});

let minute = 0;
async function ingest(thread: string, risks: { severity: string; detail: string }[]): Promise<void> {
  const at = new Date(Date.parse("2026-11-01T08:00:00Z") + ++minute * 60_000);
  await ingestPacket({ thread, summary: `work at ${at.toISOString()}`, next_action: "continue", open_risks: risks }, { kind: "http", actor: "test" }, at);
}



/** Every page of the view, `limit` thread risks at a time, as "Show more" loads them (or the first `pages`). */
async function pagesOf(filters: Partial<RiskFilters>, limit: number, pages = Infinity): Promise<RiskListDto[]> {
  const loaded: RiskListDto[] = [];
  let cursor: string | undefined;
  do {
    const page = await listRisks({ ...filters, limit, cursor });
    loaded.push(page);
    cursor = page.next_cursor ?? undefined;
  } while (cursor && loaded.length < pages);
  return loaded;
}

const shown = (pages: RiskListDto[] | null) => pages && { groups: pages.flatMap((page) => page.groups), total: pages[0]!.total, hidden: pages[0]!.hidden };

/** Runs `work`, then applies its delta to the pages loaded before it: the result, and every page read anew. */
async function applied(filters: Partial<RiskFilters>, work: () => Promise<unknown>, limit = 2) {
  const before = await pagesOf(filters, limit);
  const from = await headSeq();
  await work();
  const delta = await computeRisksDelta(await eventsAfter(from), riskFiltersSchema.parse(filters));
  return { delta, result: shown(applyRisksDelta(before, delta)), fresh: shown(await pagesOf(filters, limit)) };
}

const ack = (thread: string, detail: string, action: "acknowledged" | "resolved" = "acknowledged") =>
  triageRisks(person, { action, targets: [{ thread_key: thread, fingerprint: riskFingerprint(detail) }] });

describe("computeRisksDelta applied by the browser", () => {
  it("matches a fresh read after packets add and drop risks and people triage them, in either view and any order", async () => {
    const q = "delta-a";
    const risk = (n: number) => `${q}: risk ${n} of the first thread`;
    await ingest(`${q}/one`, [{ severity: "low", detail: risk(1) }, { severity: "high", detail: risk(2) }, { severity: "medium", detail: risk(3) }]);
    for (const filters of [{ q }, { q, state: "all" as const }, { q, sort: "detail" as const }, { q, sort: "occurrences" as const, order: "asc" as const }]) {
      let step = await applied(filters, () => ingest(`${q}/two`, [{ severity: "critical", detail: `${q}: only the second thread ${JSON.stringify(filters)}` }]));
      expect(step.delta.refetch).toBe(false);
      expect(step.result).toEqual(step.fresh);
      step = await applied(filters, () => ack(`${q}/one`, risk(2)));
      expect(step.result).toEqual(step.fresh);
      step = await applied(filters, () => ack(`${q}/one`, risk(2), "resolved"));
      expect(step.result).toEqual(step.fresh);
      // A newer packet drops risk 1 and carries risk 2 again (regressed).
      step = await applied(filters, () => ingest(`${q}/one`, [{ severity: "high", detail: risk(2) }, { severity: "medium", detail: risk(3) }]));
      expect(step.result).toEqual(step.fresh);
      // Back as it was, for the next order.
      await ingest(`${q}/one`, [{ severity: "low", detail: risk(1) }, { severity: "high", detail: risk(2) }, { severity: "medium", detail: risk(3) }]);
      await triageRisks(person, { action: "untriaged", targets: [{ thread_key: `${q}/one`, fingerprint: riskFingerprint(risk(2)) }] });
    }
  });

  it("asks for a refetch when a change touches a group shared with threads it does not name", async () => {
    const q = "delta-b";
    const shared = `${q}: a risk both threads carry`;
    await ingest(`${q}/one`, [{ severity: "high", detail: shared }]);
    await ingest(`${q}/two`, [{ severity: "high", detail: shared }]);
    const step = await applied({ q }, () => ingest(`${q}/one`, [{ severity: "low", detail: `${q}: something else` }]));
    expect(step.result).toBeNull();
  });

  it("leaves a group that now sorts past the loaded pages for Show more", async () => {
    const q = "delta-c";
    await ingest(`${q}/one`, ["b", "c", "d", "e"].map((letter) => ({ severity: "medium", detail: `${q} ${letter}` })));
    const before = await pagesOf({ q, sort: "detail" }, 2, 1);
    expect(before[0]!.groups.map((group) => group.detail)).toEqual([`${q} b`, `${q} c`]);
    const from = await headSeq();
    await ingest(`${q}/two`, [{ severity: "low", detail: `${q} a` }, { severity: "low", detail: `${q} z` }]);
    const delta = await computeRisksDelta(await eventsAfter(from), riskFiltersSchema.parse({ q, sort: "detail" }));
    const [page] = applyRisksDelta(before, delta)!;
    expect(page!.groups.map((group) => group.detail)).toEqual([`${q} a`, `${q} b`, `${q} c`]);
    expect(page!.total).toBe(6);
  });

  it("refetches for an event about no known thread, and refuses bad filters naming the field", async () => {
    const delta = await computeRisksDelta([{ seq: 1, at: new Date().toISOString(), kind: "packet_received", thread_key: null, packet_id: null, actor: "x", data: {} }], riskFiltersSchema.parse({}));
    expect(delta.refetch).toBe(true);
    expect(applyRisksDelta([], delta)).toBeNull();
    expect(() => risksStreamFilters("sort=colour")).toThrow(/risks\.sort/);
    await expectBatonError(Promise.resolve().then(() => risksStreamFilters("state=some")), "invalid_request");
  });
});
