import "server-only";
import { sqlExecutor } from "../../db/client";
import { Prisma } from "../../generated/prisma/client";
import { RISK_SORT_KEYS, type RiskOrder, type RiskSort, type RiskSortKey } from "./dto";
import type { RiskFilters } from "./filters";
import type { GroupRow, KeyValue } from "./list-sql";

/**
 * Reading the stored risk groups (docs/decisions/075-risk-groups-stored.md): a view's page along
 * one index per kind of row, and its size. ./read-model.ts keeps the rows up to date.
 */

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
export const STORED_VIEWS = ["both", "all", "open"];

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
