import "server-only";
import { performance } from "node:perf_hooks";
import { database, databaseDialect, inSqlTransaction, sqlExecutor, type Db, type SqlExecutor } from "../../db/client";
import { Prisma } from "../../generated/prisma/client";
import { inChunks, insertRows } from "../../db/sql";
import { onLedger } from "../../events/bus";
import { processSlot, singleton } from "../../core/singleton";
import { asDate } from "./active-risks";
import { RISK_SORT_KEYS, type RiskOrder, type RiskSort, type RiskSortKey } from "./dto";
import type { RiskFilters } from "./filters";
import { newId } from "../../db/ids";
import { groupKeysSql, type GroupKeyRow, type GroupRow, type KeyValue } from "./list-sql";

/**
 * The risks list's read model (docs/decisions/075-risk-groups-stored.md): each group's sort keys
 * per view, stored (RiskGroupKey). Writers only mark what changed, one statement in their
 * transaction (markRiskThreads from ingest and archive, markRiskGroups from triage); the groups
 * are rewritten after commit by a refresher, a bounded step per transaction, and a read first
 * refreshes whatever is still marked, or computes its page when that is more than a step
 * (docs/decisions/084-risk-groups-refreshed-after-commit.md). The keys are computed by the same
 * CTEs the list runs over every active risk (groupsSql), restricted to the marked fingerprints
 * (groupKeysSql, both views in one statement), so the stored order is the computed one. A dated
 * snooze changes the open view with the clock: each fingerprint's "both" or "all" row says from
 * when until when its rows hold, and a read first rewrites the rows that do not hold at its time.
 */

const BUILD_NAME = "risk-groups";
/** The build's thread marks: an id of time 0 (lib/db/ids.ts) and the thread's, older than any writer's mark. */
const BUILD_MARK_PREFIX = "rtm_0000000000";

const GROUP_COLUMNS = [
  "view", "fingerprint", "regressed", "rank", "detailKey", "threads", "firstSeenMs", "lastSeenMs", "occurrences",
  "negRegressed", "negRank", "negThreads", "negFirstSeenMs", "negLastSeenMs", "negOccurrences", "hiddenPairs", "openFrom", "openUntil",
] as const;

/** The stored column of a sort key, by its direction (negated columns make descending keys ascending). */
const STORED: Record<RiskSortKey, { asc: string; desc: string }> = {
  regressed: { asc: "regressed", desc: "negRegressed" },
  rank: { asc: "rank", desc: "negRank" },
  detailKey: { asc: "detailKey", desc: "detailKey" },
  threads: { asc: "threads", desc: "negThreads" },
  firstSeen: { asc: "firstSeenMs", desc: "negFirstSeenMs" },
  lastSeen: { asc: "lastSeenMs", desc: "negLastSeenMs" },
  occurrences: { asc: "occurrences", desc: "negOccurrences" },
};

interface StoredKey {
  column: string;
  /** Only a text key can run descending (detail, Z to A): it cannot be negated. */
  desc: boolean;
  /** The cursor's value of the key as the stored column holds it. */
  stored: (value: KeyValue) => KeyValue | bigint;
}

/** An order's keys as stored columns (RISK_SORT_KEYS, then the fingerprint ascending). */
export function storedKeys(sort: RiskSort, order: RiskOrder): StoredKey[] {
  const keys = RISK_SORT_KEYS[sort].map(({ key, fixed }): StoredKey => {
    const desc = (fixed ?? order) === "desc";
    if (key === "detailKey") return { column: "detailKey", desc, stored: (value) => value };
    const sign = desc ? -1 : 1;
    const dated = key === "firstSeen" || key === "lastSeen";
    return {
      column: STORED[key][desc ? "desc" : "asc"],
      desc: false,
      stored: (value) => (dated ? BigInt(sign * Date.parse(value as string)) : sign * (value as number)),
    };
  });
  return [...keys, { column: "fingerprint", desc: false, stored: (value) => value }];
}

const quoted = (column: string) => Prisma.raw(`"${column}"`);
/** The columns a page lists, and those its order needs to merge its two reads (the negated keys). */
const LISTED_COLUMNS = ["fingerprint", "regressed", "rank", "detailKey", "threads", "firstSeenMs", "lastSeenMs", "occurrences"];

/**
 * Keyset paging over stored keys: a row value comparison when every key ascends (one index
 * range), else the text key's bound and the tie broken by the rest (detail, Z to A).
 */
function afterStoredSql(keys: StoredKey[], values: KeyValue[] | null): Prisma.Sql {
  if (!values) return Prisma.empty;
  const bound = keys.map((key, index) => key.stored(values[index]!));
  if (keys.every((key) => !key.desc)) {
    return Prisma.sql`AND (${Prisma.join(keys.map((key) => quoted(key.column)))}) > (${Prisma.join(bound)})`;
  }
  const [first, ...rest] = keys;
  const restSql = Prisma.sql`(${Prisma.join(rest.map((key) => quoted(key.column)))}) > (${Prisma.join(bound.slice(1))})`;
  return Prisma.sql`AND ${quoted(first!.column)} <= ${bound[0]} AND (${quoted(first!.column)} < ${bound[0]} OR ${restSql})`;
}

interface StoredGroupRow {
  fingerprint: string;
  regressed: number | bigint;
  rank: number | bigint;
  detailKey: string;
  threads: number | bigint;
  firstSeenMs: number | bigint;
  lastSeenMs: number | bigint;
  occurrences: number | bigint;
}

/**
 * Which rows a view lists, by their `view` column: a group whose view "open" leaves none of its
 * thread risks out has the same keys in both views and one row, "both"; a group with hidden
 * thread risks has an "all" row and, unless all are hidden, an "open" row of its own. One row
 * per group where the views agree halves what a refresh writes (16 index entries a row).
 */
const STORED_ROWS: Record<RiskFilters["state"], readonly [string, string]> = { all: ["both", "all"], open: ["both", "open"] };
const STORED_VIEWS = ["both", "all", "open"];

/**
 * A view's stored groups after the cursor, in the order: at most `limit` rows, the first `limit`
 * of each of its two kinds of rows (STORED_ROWS), each read along one index, merged.
 */
export async function storedGroups(view: RiskFilters["state"], sort: RiskSort, order: RiskOrder, after: KeyValue[] | null, limit: number | undefined): Promise<GroupRow[]> {
  const keys = storedKeys(sort, order);
  const orderBy = Prisma.raw(keys.map((key) => `"${key.column}" ${key.desc ? "DESC" : "ASC"}`).join(", "));
  const limited = limit === undefined ? Prisma.empty : Prisma.sql`LIMIT ${limit}`;
  const columns = Prisma.join([...new Set([...LISTED_COLUMNS, ...keys.map((key) => key.column)])].map(quoted));
  const [first, second] = STORED_ROWS[view].map(
    (rows) => Prisma.sql`SELECT * FROM (SELECT ${columns} FROM "RiskGroupKey" WHERE "view" = ${rows} ${afterStoredSql(keys, after)} ORDER BY ${orderBy} ${limited}) k`,
  );
  const sql = await sqlExecutor();
  const rows = await sql.query<StoredGroupRow>(Prisma.sql`SELECT * FROM (${first} UNION ALL ${second}) u ORDER BY ${orderBy} ${limited}`);
  return rows.map((row) => ({
    ...row,
    firstSeen: new Date(Number(row.firstSeenMs)),
    lastSeen: new Date(Number(row.lastSeenMs)),
  }));
}

/** A view's size from the stored rows: its groups, and the thread risks it leaves out. */
export async function storedCounts(view: RiskFilters["state"]): Promise<{ total: number; hidden: number }> {
  const sql = await sqlExecutor();
  const [row] = await sql.query<{ total: number | bigint; hidden: number | bigint | null }>(Prisma.sql`
    SELECT (SELECT COUNT(*) FROM "RiskGroupKey" WHERE "view" IN (${Prisma.join(STORED_ROWS[view])})) AS "total",
      ${view === "open" ? Prisma.sql`(SELECT SUM("hiddenPairs") FROM "RiskGroupKey" WHERE "view" = ${"all"})` : Prisma.sql`0`} AS "hidden"`);
  return { total: Number(row?.total ?? 0), hidden: Number(row?.hidden ?? 0) };
}

const storedRow = (view: string, row: GroupRow, extra: { hiddenPairs: number; openFrom: Date | null; openUntil: Date | null }): unknown[] => {
  const [regressed, rank, threads, occurrences] = [row.regressed, row.rank, row.threads, row.occurrences].map(Number) as [number, number, number, number];
  const firstSeen = asDate(row.firstSeen).getTime();
  const lastSeen = asDate(row.lastSeen).getTime();
  return [
    view, row.fingerprint, regressed, rank, row.detailKey, threads, BigInt(firstSeen), BigInt(lastSeen), occurrences,
    -regressed, -rank, -threads, BigInt(-firstSeen), BigInt(-lastSeen), -occurrences, extra.hiddenPairs, extra.openFrom, extra.openUntil,
  ];
};

/** Threads whose pairs one refresh step rewrites: a thread carries at most one packet's risks (5,000). */
export const THREADS_PER_STEP = 10;
/** Groups one refresh step rewrites (both views): about a tenth of a second on the 2-core machine. */
export const GROUPS_PER_STEP = 500;
/** Refresh steps a read runs itself before it computes its page instead (the rest left to the refresher). */
const READ_STEPS_MAX = 3;
/**
 * The refresher waits this long after a ledger announcement, so that a burst of writes shares its
 * steps (fewer transactions and commits under a steady load); a read refreshes what it needs itself.
 */
const REFRESH_DELAY_MS = 250;
/** The refreshers' advisory lock on PostgreSQL ("baton-r" in ASCII): one refresher at a time across instances. */
const REFRESH_LOCK_KEY = 0x626174_6f6e2d72n;

/**
 * A writer's mark, in its transaction: these threads' active packet, history or archiving
 * changed. One statement; the refresher rewrites their pairs and groups after commit.
 */
export async function markRiskThreads(sql: SqlExecutor, threadIds: readonly string[]): Promise<void> {
  const unique = [...new Set(threadIds)];
  if (unique.length) await insertRows(sql, "RiskThreadMark", ["id", "threadId"], markIds("rtm", unique));
}

/** Rows of marks: one time-sortable id (lib/db/ids.ts) per call, numbered within it (a big packet's thousands of marks share its randomness). */
function markIds(prefix: string, values: readonly string[]): unknown[][] {
  const id = newId(prefix);
  return values.map((value, n) => [`${id}-${n}`, value]);
}

/** A writer's mark, in its transaction: these fingerprints' triage changed. One statement. */
export async function markRiskGroups(sql: SqlExecutor, fingerprints: readonly string[]): Promise<void> {
  const unique = [...new Set(fingerprints)];
  if (unique.length) await insertRows(sql, "RiskGroupMark", ["id", "fingerprint"], markIds("rgm", unique));
}

/** Rewrites the stored rows of `fingerprints` from the active risks, their histories and triage at `now`. */
async function rewriteGroups(sql: SqlExecutor, fingerprints: readonly string[], now: Date): Promise<void> {
  await inChunks([...new Set(fingerprints)], async (chunk) => {
    const groups = await sql.query<GroupKeyRow>(groupKeysSql(now, chunk));
    const dateOrNull = (value: string | Date | null | undefined) => (value === null || value === undefined ? null : asDate(value));
    // Every kind of row named: the primary key (view, fingerprint) finds the rows.
    await sql.execute(Prisma.sql`DELETE FROM "RiskGroupKey" WHERE "view" IN (${Prisma.join(STORED_VIEWS)}) AND "fingerprint" IN (${Prisma.join(chunk)})`);
    await insertRows(
      sql,
      "RiskGroupKey",
      GROUP_COLUMNS,
      groups.map((row) => storedRow(row.view, row, { hiddenPairs: Number(row.hiddenPairs), openFrom: dateOrNull(row.openFrom), openUntil: dateOrNull(row.openUntil) })),
    );
    return [];
  });
}

/**
 * Threads' pairs written again from their active packets; the fingerprints they carried before
 * and carry now are marked for their groups' rewrite (a later step's, when they are many).
 */
async function rewritePairs(sql: SqlExecutor, threadIds: readonly string[]): Promise<void> {
  const threads = [...new Set(threadIds)];
  const before = await sql.query<{ fingerprint: string }>(Prisma.sql`DELETE FROM "RiskActivePair" WHERE "threadId" IN (${Prisma.join(threads)}) RETURNING "fingerprint"`);
  const after = await sql.query<{ fingerprint: string }>(Prisma.sql`
    INSERT INTO "RiskActivePair" ("threadId", "fingerprint")
    SELECT DISTINCT t."id", r."fingerprint" FROM "Thread" t JOIN "Risk" r ON r."versionId" = t."activeVersionId"
    WHERE t."archived" = ${false} AND t."id" IN (${Prisma.join(threads)})
    RETURNING "fingerprint"`);
  const fingerprints = [...new Set([...before, ...after].map((row) => row.fingerprint))];
  await markRiskGroups(sql, fingerprints);
}

/** One refresher at a time in this process: a read's steps and the background's never interleave. */
const refreshTurn = singleton("RiskGroupRefreshTurn", () => ({ tail: Promise.resolve() as Promise<unknown> }));

function inTurn<T>(work: () => Promise<T>): Promise<T> {
  const run = refreshTurn.tail.then(work, work);
  refreshTurn.tail = run.catch(() => undefined);
  return run;
}

/**
 * A refresher's transaction of raw statements (on PostgreSQL on the driver adapter's own
 * transaction, decision 083: a step's statements carry thousands of values), under the
 * refreshers' lock, not the writers' (ingest does not wait for it).
 */
function refreshTransaction<T>(work: (sql: SqlExecutor) => Promise<T>, timeoutMs?: number): Promise<T> {
  return inSqlTransaction(
    async (sql) => {
      // A step reads only its marks' rows, through the fingerprint and thread indexes. Right after
      // a big packet the planner has no statistics of its rows yet and, pricing an index probe at
      // 4 pages read, would scan every risk per step instead (a full refresh quadratic in the
      // risks, EXPLAIN ANALYZE on 25,000): this transaction plans with cached index probes.
      if (databaseDialect() === "postgresql") {
        await sql.query(Prisma.sql`
          SELECT set_config('enable_seqscan', 'off', true) AS "seq", set_config('random_page_cost', '1.1', true) AS "probe",
            1 AS "locked" FROM pg_advisory_xact_lock(${REFRESH_LOCK_KEY})`);
      }
      return work(sql);
    },
    { ledger: false, ...(timeoutMs ? { timeoutMs } : {}) },
  );
}

/**
 * One bounded step, in one transaction: claims (deletes) up to THREADS_PER_STEP thread marks and
 * rewrites their pairs, then claims up to GROUPS_PER_STEP group marks and rewrites those groups
 * at `now`. A mark committed meanwhile stays for the next step. True when it claimed any.
 */
async function refreshStep(now: Date): Promise<boolean> {
  return refreshTransaction(async (sql) => {
    const threads = await sql.query<{ threadId: string }>(Prisma.sql`
      DELETE FROM "RiskThreadMark" WHERE "id" IN (SELECT "id" FROM "RiskThreadMark" ORDER BY "id" LIMIT ${THREADS_PER_STEP}) RETURNING "threadId"`);
    if (threads.length) await rewritePairs(sql, threads.map((row) => row.threadId));
    const groups = await sql.query<{ fingerprint: string }>(Prisma.sql`
      DELETE FROM "RiskGroupMark" WHERE "id" IN (SELECT "id" FROM "RiskGroupMark" ORDER BY "id" LIMIT ${GROUPS_PER_STEP}) RETURNING "fingerprint"`);
    if (groups.length) await rewriteGroups(sql, groups.map((row) => row.fingerprint), now);
    return threads.length > 0 || groups.length > 0;
  });
}

/** Marks not yet refreshed, each count capped just above what one step takes. */
async function pendingMarks(sql: SqlExecutor): Promise<{ threads: number; groups: number }> {
  const [row] = await sql.query<{ threads: number | bigint; groups: number | bigint }>(Prisma.sql`
    SELECT (SELECT COUNT(*) FROM (SELECT 1 FROM "RiskThreadMark" LIMIT ${THREADS_PER_STEP + 1}) t) AS "threads",
      (SELECT COUNT(*) FROM (SELECT 1 FROM "RiskGroupMark" LIMIT ${GROUPS_PER_STEP + 1}) g) AS "groups"`);
  return { threads: Number(row?.threads ?? 0), groups: Number(row?.groups ?? 0) };
}

/** Databases whose build is known to have begun (one look per database and process). */
const buildBegun = new WeakSet<Db>();

const buildDone = async (sql: SqlExecutor) =>
  (await sql.query<{ name: string }>(Prisma.sql`SELECT "name" FROM "ReadModelBuild" WHERE "name" = ${BUILD_NAME}`)).length > 0;

/**
 * A database that never had the model (one from before it, or a new one) gets it built by the
 * refresher: one transaction empties both tables and marks every active thread not marked yet (a
 * statement over the threads, not their risks), and writes the build's name; the steps do the rest.
 */
async function beginBuild(): Promise<void> {
  const db = await database();
  if (buildBegun.has(db)) return;
  if (!(await buildDone(await sqlExecutor()))) {
    await inTurn(() =>
      refreshTransaction(async (sql) => {
        if (await buildDone(sql)) return;
        await sql.execute(Prisma.sql`DELETE FROM "RiskActivePair"`);
        await sql.execute(Prisma.sql`DELETE FROM "RiskGroupKey"`);
        await sql.execute(Prisma.sql`
          INSERT INTO "RiskThreadMark" ("id", "threadId") SELECT ${BUILD_MARK_PREFIX} || "id", "id" FROM "Thread"
          WHERE "archived" = ${false} AND "activeVersionId" IS NOT NULL AND "id" NOT IN (SELECT "threadId" FROM "RiskThreadMark")`);
        await sql.execute(Prisma.sql`INSERT INTO "ReadModelBuild" ("name", "builtAt") VALUES (${BUILD_NAME}, ${new Date()})`);
      }),
    );
  }
  buildBegun.add(db);
}

/** Whether this process runs the background refresher (a server: lib/server/background.ts). */
const refresherStarted = singleton("RiskGroupRefresherStarted", () => ({ value: false }));

const refresher = processSlot<{ timer: NodeJS.Timeout | null; running: boolean; again: boolean }>("RiskGroupRefresher");

/**
 * Refreshes until no mark is left, a step (one transaction) at a time at the current time, after
 * beginning the build of a database without the model. The background's work; benchmarks and
 * tests call it to wait for it. Returns the steps taken, the longest one's milliseconds and this
 * process's CPU milliseconds during the steps (all of a step's work on SQLite, which runs in the
 * process; on PostgreSQL the server's share is not in it).
 */
export async function refreshRiskGroups(): Promise<{ steps: number; longestStepMs: number; cpuMs: number }> {
  await beginBuild();
  let steps = 0;
  let longestStepMs = 0;
  let cpuMs = 0;
  for (;;) {
    const start = performance.now();
    const cpu = process.cpuUsage();
    const claimed = await inTurn(() => refreshStep(new Date()));
    const used = process.cpuUsage(cpu);
    cpuMs += (used.user + used.system) / 1000;
    if (!claimed) break;
    steps++;
    longestStepMs = Math.max(longestStepMs, performance.now() - start);
  }
  return { steps, longestStepMs, cpuMs };
}

/** The background refresher's run: again while writes announced themselves meanwhile; errors are logged (a read refreshes or computes). */
async function drain(): Promise<void> {
  const state = refresher.value!;
  if (state.running) {
    state.again = true;
    return;
  }
  state.running = true;
  try {
    do {
      state.again = false;
      await refreshRiskGroups();
    } while (state.again);
  } catch (error) {
    console.error(`baton: refreshing the risks list's groups failed (a read refreshes or computes them): ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    state.running = false;
  }
}

/** Schedules the refresher shortly, once for a burst of calls (a server's background; see startRiskGroupRefresher). */
export function scheduleRiskGroupRefresh(delayMs = REFRESH_DELAY_MS): void {
  const state = (refresher.value ??= { timer: null, running: false, again: false });
  if (state.timer) return;
  state.timer = setTimeout(() => {
    state.timer = null;
    void drain();
  }, delayMs);
  state.timer.unref();
}

/**
 * A running server's refresher: after every ledger announcement (a packet, archiving, a triage;
 * on PostgreSQL another instance's too) it refreshes what is marked, and at start it begins the
 * build of a database that has no model, in steps, without holding up the start.
 */
export function startRiskGroupRefresher(): void {
  if (refresherStarted.value) return;
  refresherStarted.value = true;
  onLedger(() => scheduleRiskGroupRefresh());
  scheduleRiskGroupRefresh(0);
}

/**
 * Makes the stored rows hold at `now` and then reads them with `read`, or answers null when they
 * cannot be made to hold within a few steps (a build or a big packet's marks under way: the
 * caller computes its page, and the refresher carries on). Under the process's refresh turn, so
 * that no step of this process rewrites groups between the look and the read.
 */
export async function withStoredRiskGroups<T>(now: Date, read: () => Promise<T>): Promise<T | null> {
  await beginBuild();
  const sql = await sqlExecutor();
  let fresh = false;
  const answer = await inTurn(async () => {
    for (let steps = 0; ; steps++) {
      const pending = await pendingMarks(sql);
      if (!pending.threads && !pending.groups) break;
      const withinAStep = pending.threads <= THREADS_PER_STEP && pending.groups <= GROUPS_PER_STEP;
      // More than a step's marks: a server's refresher is on them; without one (a CLI, a test) each read takes one step.
      if (steps >= READ_STEPS_MAX || (!withinAStep && (steps > 0 || refresherStarted.value))) return null;
      await refreshStep(now);
    }
    // The clock: fingerprints whose dated snoozes ended (or, for a `now` before their time, had not yet begun) since they were written.
    const stale = await sql.query<{ fingerprint: string }>(Prisma.sql`
      SELECT "fingerprint" FROM "RiskGroupKey" WHERE "view" IN (${"both"}, ${"all"}) AND "openUntil" <= ${now}
      UNION SELECT "fingerprint" FROM "RiskGroupKey" WHERE "view" IN (${"both"}, ${"all"}) AND "openFrom" > ${now}
      LIMIT ${GROUPS_PER_STEP + 1}`);
    if (stale.length > GROUPS_PER_STEP) {
      await inSqlTransaction((marks) => markRiskGroups(marks, stale.map((row) => row.fingerprint)), { ledger: false });
      return null;
    }
    if (stale.length) await refreshTransaction((tx) => rewriteGroups(tx, stale.map((row) => row.fingerprint), now));
    fresh = true;
    return read();
  });
  if (!fresh && refresherStarted.value) scheduleRiskGroupRefresh(0);
  return fresh ? answer : null;
}
