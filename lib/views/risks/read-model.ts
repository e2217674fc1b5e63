import "server-only";
import { database, inTransaction, sqlExecutor, type Db, type SqlExecutor, type Tx } from "../../db/client";
import { Prisma } from "../../generated/prisma/client";
import { inChunks, insertRows } from "../../db/sql";
import { asDate } from "./active-risks";
import { RISK_SORT_KEYS, type RiskOrder, type RiskSort, type RiskSortKey } from "./dto";
import type { RiskFilters } from "./filters";
import { groupsSql, hiddenPairsSql, sortKeys, type GroupRow, type KeyValue, type SortKey } from "./list-sql";

/**
 * The risks list's read model (docs/decisions/075-risk-groups-stored.md): each group's sort keys
 * per view, stored (RiskGroupKey) and rewritten whenever what they derive from changes, in the
 * writer's transaction: a thread's active packet or archiving (refreshThreadRisks, from ingest
 * and archive), a triage (refreshRiskGroups). The keys are computed by the same statement the
 * list used to run over every active risk (groupsSql), restricted to the changed fingerprints, so
 * the stored order is the computed one. A dated snooze changes the open view with the clock:
 * each fingerprint's "all" row says from when until when its rows hold, and a read first
 * rewrites the rows that do not hold at its time (refreshStaleRiskGroups).
 */

const BUILD_NAME = "risk-groups";

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

/** A view's stored groups after the cursor, in the order: at most `limit` rows, read along one index. */
export async function storedGroups(view: RiskFilters["state"], sort: RiskSort, order: RiskOrder, after: KeyValue[] | null, limit: number | undefined): Promise<GroupRow[]> {
  const keys = storedKeys(sort, order);
  const orderBy = Prisma.raw(keys.map((key) => `"${key.column}" ${key.desc ? "DESC" : "ASC"}`).join(", "));
  const sql = await sqlExecutor();
  const rows = await sql.query<StoredGroupRow>(Prisma.sql`
    SELECT "fingerprint", "regressed", "rank", "detailKey", "threads", "firstSeenMs", "lastSeenMs", "occurrences"
    FROM "RiskGroupKey" WHERE "view" = ${view} ${afterStoredSql(keys, after)}
    ORDER BY ${orderBy} ${limit === undefined ? Prisma.empty : Prisma.sql`LIMIT ${limit}`}`);
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
    SELECT (SELECT COUNT(*) FROM "RiskGroupKey" WHERE "view" = ${view}) AS "total",
      ${view === "open" ? Prisma.sql`(SELECT SUM("hiddenPairs") FROM "RiskGroupKey" WHERE "view" = ${"all"})` : Prisma.sql`0`} AS "hidden"`);
  return { total: Number(row?.total ?? 0), hidden: Number(row?.hidden ?? 0) };
}

const storedRow = (view: RiskFilters["state"], row: GroupRow, extra: { hiddenPairs: number; openFrom: Date | null; openUntil: Date | null }): unknown[] => {
  const [regressed, rank, threads, occurrences] = [row.regressed, row.rank, row.threads, row.occurrences].map(Number) as [number, number, number, number];
  const firstSeen = asDate(row.firstSeen).getTime();
  const lastSeen = asDate(row.lastSeen).getTime();
  return [
    view, row.fingerprint, regressed, rank, row.detailKey, threads, BigInt(firstSeen), BigInt(lastSeen), occurrences,
    -regressed, -rank, -threads, BigInt(-firstSeen), BigInt(-lastSeen), -occurrences, extra.hiddenPairs, extra.openFrom, extra.openUntil,
  ];
};

/** The attention order: any order would do, the rows are stored, not listed. */
const ANY_ORDER: SortKey[] = sortKeys("attention", "desc");

/**
 * Rewrites the stored rows of `fingerprints` from the active risks, their histories and triage
 * at `now`. Inside the writer's transaction (the one that changed them). A page's worth of
 * statements per 500 fingerprints.
 */
export async function refreshRiskGroups(tx: Tx, fingerprints: readonly string[], now: Date): Promise<void> {
  if (await builtIn(tx, false)) await rewriteGroups(tx, fingerprints, now);
}

async function rewriteGroups(tx: Tx, fingerprints: readonly string[], now: Date): Promise<void> {
  const sql = await sqlExecutor(tx);
  await inChunks([...new Set(fingerprints)], async (chunk) => {
    const groups = await sql.query<GroupRow & { view: RiskFilters["state"] }>(Prisma.sql`
      SELECT 'all' AS "view", a.* FROM (${groupsSql("all", undefined, now, ANY_ORDER, null, undefined, chunk)}) a
      UNION ALL SELECT 'open' AS "view", o.* FROM (${groupsSql("open", undefined, now, ANY_ORDER, null, undefined, chunk)}) o`);
    const hidden = await sql.query<{ fingerprint: string; hidden: number | bigint; openFrom: string | Date | null; openUntil: string | Date | null }>(hiddenPairsSql(now, chunk));
    const hiddenOf = new Map(hidden.map((row) => [row.fingerprint, row]));
    const dateOrNull = (value: string | Date | null | undefined) => (value === null || value === undefined ? null : asDate(value));
    // Both views named: the primary key (view, fingerprint) finds the rows.
    await sql.execute(Prisma.sql`DELETE FROM "RiskGroupKey" WHERE "view" IN (${"all"}, ${"open"}) AND "fingerprint" IN (${Prisma.join(chunk)})`);
    await insertRows(
      sql,
      "RiskGroupKey",
      GROUP_COLUMNS,
      groups.map((row) => {
        const pairs = row.view === "all" ? hiddenOf.get(row.fingerprint) : undefined;
        return storedRow(row.view, row, { hiddenPairs: Number(pairs?.hidden ?? 0), openFrom: dateOrNull(pairs?.openFrom), openUntil: dateOrNull(pairs?.openUntil) });
      }),
    );
    return [];
  });
}

/**
 * After threads changed (a new active packet, a packet of their history, archiving): their
 * active fingerprints are written again, and the groups of the ones they carried before and
 * carry now are refreshed. Inside the transaction that changed them.
 */
export async function refreshThreadRisks(tx: Tx, threadIds: readonly string[], now = new Date()): Promise<void> {
  if (await builtIn(tx, false)) await rewriteThreads(tx, threadIds, now);
}

async function rewriteThreads(tx: Tx, threadIds: readonly string[], now: Date): Promise<void> {
  const sql = await sqlExecutor(tx);
  const fingerprints = await inChunks([...new Set(threadIds)], async (chunk) => {
    const before = await sql.query<{ fingerprint: string }>(Prisma.sql`DELETE FROM "RiskActivePair" WHERE "threadId" IN (${Prisma.join(chunk)}) RETURNING "fingerprint"`);
    const after = await sql.query<{ fingerprint: string }>(Prisma.sql`
      INSERT INTO "RiskActivePair" ("threadId", "fingerprint")
      SELECT DISTINCT t."id", r."fingerprint" FROM "Thread" t JOIN "Risk" r ON r."versionId" = t."activeVersionId"
      WHERE t."archived" = ${false} AND t."id" IN (${Prisma.join(chunk)})
      RETURNING "fingerprint"`);
    return [...before, ...after].map((row) => row.fingerprint);
  });
  await rewriteGroups(tx, fingerprints, now);
}

/** Databases whose read model is known to be built (one look per database and process). */
const built = new WeakSet<Db>();

const buildDone = async (sql: SqlExecutor) =>
  (await sql.query<{ name: string }>(Prisma.sql`SELECT "name" FROM "ReadModelBuild" WHERE "name" = ${BUILD_NAME}`)).length > 0;

/**
 * A writer's transaction builds the read model in full only while that is quick: a new database,
 * or one with few active risks. A larger one that predates the model is built by its first read,
 * in a transaction of its own without the writers' time limit; until then writers leave it be.
 */
const BUILD_IN_A_WRITE_MAX_RISKS = 10_000;

/**
 * Whether the read model is built (and so must be kept) in `tx`: builds it when this database
 * never had it, if `always` or its active risks are few; false when it is left for a read.
 */
async function builtIn(tx: Tx, always: boolean): Promise<boolean> {
  const db = await database();
  if (built.has(db)) return true;
  const sql = await sqlExecutor(tx);
  if (await buildDone(sql)) {
    built.add(db);
    return true;
  }
  if (!always) {
    const [few] = await sql.query<{ risks: number | bigint }>(Prisma.sql`
      SELECT COUNT(*) AS "risks" FROM (
        SELECT 1 FROM "Thread" t JOIN "Risk" r ON r."versionId" = t."activeVersionId" WHERE t."archived" = ${false} LIMIT ${BUILD_IN_A_WRITE_MAX_RISKS + 1}
      ) a`);
    if (Number(few?.risks ?? 0) > BUILD_IN_A_WRITE_MAX_RISKS) return false;
  }
  await sql.execute(Prisma.sql`DELETE FROM "RiskActivePair"`);
  await sql.execute(Prisma.sql`DELETE FROM "RiskGroupKey"`);
  const threads = await sql.query<{ id: string }>(Prisma.sql`SELECT "id" FROM "Thread" WHERE "archived" = ${false} AND "activeVersionId" IS NOT NULL`);
  await rewriteThreads(tx, threads.map((thread) => thread.id), new Date());
  // Known as built in this process only once a later transaction reads the committed mark.
  await sql.execute(Prisma.sql`INSERT INTO "ReadModelBuild" ("name", "builtAt") VALUES (${BUILD_NAME}, ${new Date()})`);
  return true;
}

/** A read's look that the model is built, building it in a transaction of its own when not. */
async function ensureBuilt(): Promise<void> {
  const db = await database();
  if (built.has(db)) return;
  if (await buildDone(await sqlExecutor())) {
    built.add(db);
    return;
  }
  await inTransaction((tx) => builtIn(tx, true), { timeoutMs: 600_000 });
}

/**
 * Makes the stored rows hold at `now`: builds them once, then rewrites the fingerprints whose
 * dated snoozes ended (or, for a `now` before their time, had not yet begun) since they were written.
 */
export async function riskGroupsAt(now: Date): Promise<void> {
  await ensureBuilt();
  const sql = await sqlExecutor();
  const stale = await sql.query<{ fingerprint: string }>(Prisma.sql`
    SELECT "fingerprint" FROM "RiskGroupKey" WHERE "view" = ${"all"} AND "openUntil" <= ${now}
    UNION SELECT "fingerprint" FROM "RiskGroupKey" WHERE "view" = ${"all"} AND "openFrom" > ${now}`);
  if (!stale.length) return;
  await inTransaction((tx) => refreshRiskGroups(tx, stale.map((row) => row.fingerprint), now));
}

