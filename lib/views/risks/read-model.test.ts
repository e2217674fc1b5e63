import { beforeAll, describe, expect, it } from "vitest";
import type { Person } from "../../auth/roles";
import { createFirstAdmin } from "../../auth/users";
import { closeDatabase, sqlExecutor } from "../../db/client";
import { Prisma } from "../../generated/prisma/client";
import { archiveThread } from "../../human/archive";
import { ingestPacket } from "../../ingest/ingest";
import { riskFingerprint } from "../../contract/fingerprint";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { RISK_ORDERS, RISK_SORTS, RISK_VIEWS, type RiskOrder, type RiskSort, type RiskView } from "./dto";
import { countGroups, groupsSql, sortKeys, type GroupRow } from "./list-sql";
import { listRisks } from "./queries";
import { GROUPS_PER_STEP, refreshRiskGroups } from "./read-model";
import { triageRisks, type TriageRequest } from "./triage";

/**
 * The stored groups (docs/decisions/075-risk-groups-stored.md) list in exactly the order, and
 * count exactly what, the statement over every active risk computes (decision 058): every sort,
 * order and view, page by page, with ties, triage, archiving, history-only packets and the clock.
 */

freshDatabaseForThisFile();

let person: Person;
const HOUR = 3_600_000;
const base = Date.parse("2026-11-20T08:00:00Z");
const at = (hours: number) => new Date(base + hours * HOUR);
/** A dated snooze ends between the reads "now" and "later". */
const snoozeEnd = new Date(Date.now() + 2 * 24 * HOUR);
const later = new Date(snoozeEnd.getTime() + HOUR);

async function ingest(thread: string, hours: number, risks: { severity: string; detail: string }[]): Promise<void> {
  await ingestPacket({ thread, summary: `work at ${hours}`, next_action: "continue", open_risks: risks }, { kind: "http", actor: "test" }, at(hours));
}

const triage = (action: TriageRequest["action"], thread: string, detail: string, snoozedUntil?: Date | null) =>
  triageRisks(person, {
    action,
    targets: [{ thread_key: thread, fingerprint: riskFingerprint(detail) }],
    ...(snoozedUntil === undefined ? {} : { snoozed_until: snoozedUntil }),
  });

// Twelve risks of one packet at one severity: equal keys in every order but the detail, ordered by fingerprint.
const tied = Array.from({ length: 12 }, (_, n) => ({ severity: "medium", detail: `tied risk ${"abcdefghijkl"[n]!.repeat(3)}` }));
// Details equal in their first 64 characters, in any case: equal detail keys.
const prefix = "A risk whose first sixty-four characters are the same in every one of";
const samePrefix = ["one", "two", "three"].map((end, n) => ({ severity: n ? "low" : "high", detail: `${n % 2 ? prefix.toUpperCase() : prefix} ${end}` }));

beforeAll(async () => {
  person = await createFirstAdmin({ username: "read-model-admin", password: "a long enough password" });
  await ingest("rm/tied", 1, tied);
  await ingest("rm/prefix", 2, samePrefix);
  // One risk in three threads at three severities and times; one thread carries it twice.
  await ingest("rm/a", 3, [{ severity: "low", detail: "shared: cache serves stale rows" }, { severity: "critical", detail: "a: credentials in the log" }]);
  await ingest("rm/b", 4, [{ severity: "high", detail: "shared: cache serves stale rows" }, { severity: "medium", detail: "b: flaky test" }]);
  await ingest("rm/a", 5, [{ severity: "medium", detail: "shared: cache serves stale rows" }, { severity: "info", detail: "a: later only" }]);
  await ingest("rm/c", 6, [{ severity: "high", detail: "shared: cache serves stale rows" }, { severity: "warning", detail: "c: resolved then back" }, { severity: "low", detail: "c: resolved" }]);
  // A late, older packet of rm/b: history only (occurrences and first sighting), not its active packet.
  await ingest("rm/b", 0, [{ severity: "low", detail: "shared: cache serves stale rows" }, { severity: "low", detail: "b: flaky test" }]);
  // Triage: resolved (hidden), resolved and carried again (regressed), acknowledged, snoozed until a date and until it rises.
  await triage("resolved", "rm/c", "c: resolved then back");
  await triage("resolved", "rm/c", "c: resolved");
  await triage("acknowledged", "rm/b", "shared: cache serves stale rows");
  await triage("snoozed", "rm/a", "shared: cache serves stale rows", snoozeEnd);
  await triage("snoozed", "rm/tied", tied[3]!.detail, snoozeEnd);
  await triage("snoozed", "rm/tied", tied[4]!.detail, null);
  // Carried again after its resolution (triage happens now): regressed.
  await ingest("rm/c", (Date.now() + 60_000 - base) / HOUR, [{ severity: "high", detail: "shared: cache serves stale rows" }, { severity: "warning", detail: "c: resolved then back" }, { severity: "low", detail: "c: resolved" }]);
  // An archived thread's risks leave both views; its fingerprint lives on in no other thread.
  await ingest("rm/gone", 8, [{ severity: "critical", detail: "gone: archived with its thread" }, { severity: "critical", detail: "shared: cache serves stale rows" }]);
  await archiveThread(person, "rm/gone", "merged");
}, 120_000);

/** The groups' fingerprints and counts as the statement over every active risk computes them. */
async function computed(view: RiskView, sort: RiskSort, order: RiskOrder, now: Date) {
  const sql = await sqlExecutor();
  const rows = await sql.query<GroupRow>(groupsSql(view, undefined, now, sortKeys(sort, order), null, undefined));
  return { fingerprints: rows.map((row) => row.fingerprint), ...(await countGroups(view, undefined, now)) };
}

/** Every page of the stored list, `limit` thread risks at a time. */
async function walked(view: RiskView, sort: RiskSort, order: RiskOrder, now: Date, limit: number) {
  const fingerprints: string[] = [];
  let cursor: string | undefined;
  let counts = { total: -1, hidden: -1 };
  for (let pages = 0; pages < 100; pages++) {
    const page = await listRisks({ state: view, sort, order, limit, cursor }, now);
    fingerprints.push(...page.groups.map((group) => group.fingerprint));
    counts = { total: page.total, hidden: page.hidden };
    if (!page.next_cursor) break;
    cursor = page.next_cursor;
  }
  return { fingerprints, ...counts };
}

const orders = RISK_VIEWS.flatMap((view) => RISK_SORTS.flatMap((sort) => RISK_ORDERS.map((order) => [view, sort, order] as const)));

describe("the stored risk groups", () => {
  it("hold the views this data makes: ties, a regression, hidden and snoozed risks, no archived thread", async () => {
    const open = await listRisks({ state: "open" });
    expect(open.groups[0]).toMatchObject({ detail: "c: resolved then back", regressed: true });
    expect(open.groups.map((group) => group.detail)).not.toContain("gone: archived with its thread");
    expect(open.groups.map((group) => group.detail)).not.toContain(tied[3]!.detail);
    // Three snoozed (two until a date, one until it rises); both of rm/c's resolved risks came back.
    expect(open.hidden).toBe(3);
    const shared = (await listRisks({ state: "all" })).groups.find((group) => group.fingerprint === riskFingerprint("shared: cache serves stale rows"))!;
    expect(shared.threads.map((thread) => thread.thread_key).sort()).toEqual(["rm/a", "rm/b", "rm/c"]);
    expect(shared.occurrences).toBe(6);
  });

  for (const limit of [1, 4]) {
    it(`list every sort, order and view in the computed order, ${limit} thread risk(s) a page, with the computed counts`, async () => {
      for (const [view, sort, order] of orders) {
        const expected = await computed(view, sort, order, new Date());
        expect(await walked(view, sort, order, new Date(), limit), `${view} ${sort} ${order}`).toEqual(expected);
      }
    }, 120_000);
  }

  it("follow the clock: a dated snooze that ends shows its risks, and an earlier time hides them again", async () => {
    for (const now of [later, new Date(), later]) {
      for (const [view, sort, order] of orders) {
        const expected = await computed(view, sort, order, now);
        expect(await walked(view, sort, order, now, 4), `${view} ${sort} ${order} at ${now.toISOString()}`).toEqual(expected);
      }
    }
    expect((await listRisks({}, later)).hidden).toBe(1);
    expect((await listRisks({}, new Date())).hidden).toBe(3);
  }, 120_000);

  it("follow a triage taken back and a thread that drops a risk", async () => {
    await triage("untriaged", "rm/c", "c: resolved");
    await ingest("rm/tied", 9, tied.slice(0, 6));
    for (const [view, sort, order] of orders) {
      const expected = await computed(view, sort, order, new Date());
      expect(await walked(view, sort, order, new Date(), 4), `${view} ${sort} ${order}`).toEqual(expected);
    }
  }, 120_000);

  it("are built in full by the first read of a database that has none (one from before them)", async () => {
    const sql = await sqlExecutor();
    for (const table of ["ReadModelBuild", "RiskGroupKey", "RiskActivePair"]) await sql.execute(Prisma.sql`DELETE FROM ${Prisma.raw(`"${table}"`)}`);
    // A new client: the process's note that this database was built goes with the old one.
    await closeDatabase();
    for (const [view, sort, order] of orders) {
      const expected = await computed(view, sort, order, new Date());
      expect(await walked(view, sort, order, new Date(), 4), `${view} ${sort} ${order}`).toEqual(expected);
    }
  }, 120_000);

  it("are only marked by a writer, and a read right after the write refreshes them and sees it", async () => {
    const sql = await sqlExecutor();
    const detail = "fresh: seen by the next read";
    const storedRows = async () => sql.query<{ view: string }>(Prisma.sql`SELECT "view" FROM "RiskGroupKey" WHERE "fingerprint" = ${riskFingerprint(detail)} ORDER BY "view"`);
    await ingest("rm/fresh", 10, [{ severity: "critical", detail }]);
    // The write marked its thread and left the groups alone.
    expect(await storedRows()).toEqual([]);
    expect(await sql.query(Prisma.sql`SELECT "threadId" FROM "RiskThreadMark"`)).toHaveLength(1);
    const first = await listRisks({ state: "open", sort: "severity", order: "desc", limit: 50 });
    expect(first.groups.map((group) => group.detail)).toContain(detail);
    // From the stored groups: the read refreshed them, and left no mark.
    // Nothing of it hidden: one row stands for both views.
    expect((await storedRows()).map((row) => row.view)).toEqual(["both"]);
    expect(await sql.query(Prisma.sql`SELECT "id" FROM "RiskThreadMark" UNION ALL SELECT "id" FROM "RiskGroupMark"`)).toEqual([]);
    await triage("resolved", "rm/fresh", detail);
    expect((await listRisks({ state: "open", sort: "severity", order: "desc", limit: 50 })).groups.map((group) => group.detail)).not.toContain(detail);
    expect((await storedRows()).map((row) => row.view)).toEqual(["all"]);
  });

  it("are computed by a read while more than a step's marks wait, and the refresher takes them a step at a time", async () => {
    // Numbers in a detail do not tell fingerprints apart: letters do.
    const letters = (n: number) => [n % 26, Math.floor(n / 26) % 26, Math.floor(n / 676)].map((digit) => "abcdefghijklmnopqrstuvwxyz"[digit]).join("");
    const many = Array.from({ length: 3 * GROUPS_PER_STEP + 100 }, (_, n) => ({ severity: "low", detail: `many: risk ${letters(n)}` }));
    await ingest("rm/many", 11, many);
    const sql = await sqlExecutor();
    const marks = async () => (await sql.query(Prisma.sql`SELECT "id" FROM "RiskThreadMark" UNION ALL SELECT "id" FROM "RiskGroupMark"`)).length;
    // Without a refresher (no server here) the read takes one step, then computes its page: more marks wait than a step takes.
    const page = await listRisks({ state: "all", sort: "detail", order: "asc", limit: 200 });
    const expected = await computed("all", "detail", "asc", new Date());
    expect(page.groups.map((group) => group.fingerprint)).toEqual(expected.fingerprints.slice(0, page.groups.length));
    expect(page.total).toBe(expected.total);
    const left = await marks();
    expect(left).toBe(many.length - GROUPS_PER_STEP);
    // The refresher: at most GROUPS_PER_STEP groups a step (a transaction).
    expect((await refreshRiskGroups()).steps).toBe(Math.ceil(left / GROUPS_PER_STEP));
    expect(await marks()).toBe(0);
    for (const [view, sort, order] of orders.filter(([, sort]) => sort === "attention" || sort === "detail")) {
      const expected = await computed(view, sort, order, new Date());
      expect(await walked(view, sort, order, new Date(), 200), `${view} ${sort} ${order}`).toEqual(expected);
    }
  }, 120_000);
});
