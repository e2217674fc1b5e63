import "server-only";
import { z } from "zod";
import { sqlExecutor } from "../../db/client";
import { Prisma } from "../../generated/prisma/client";
import { BatonError } from "../../core/errors";
import { asDate, riskTextFilter } from "./active-risks";
import { DETAIL_KEY_CHARS, RISK_SORT_KEYS, RISK_SORTS, type RiskOrder, type RiskSort, type RiskSortKey } from "./dto";
import type { RiskFilters } from "./filters";
import { riskStateSql, severityRankSql } from "./state-sql";
import type { RiskState } from "./triage-state";

/**
 * The risks list in SQL (docs/decisions/058-risks-paged-in-sql.md): the view's groups sorted,
 * keyset-paged and counted by the database, and the cursors that name a place in them.
 */

/** States the default view leaves out: a person already dealt with them (until they come back). */
export const HIDDEN_BY_DEFAULT: ReadonlySet<RiskState> = new Set(["resolved", "snoozed"]);
const HIDDEN_SQL = Prisma.raw([...HIDDEN_BY_DEFAULT].map((state) => `'${state}'`).join(", "));

/** A column of the groups' statement the list is ordered by. */
export interface SortKey {
  column: RiskSortKey | "fingerprint";
  desc: boolean;
}

/** The keys of each order (RISK_SORT_KEYS), the last always the fingerprint (ascending) so that every group has one place. */
export function sortKeys(sort: RiskSort, order: RiskOrder): SortKey[] {
  return [...RISK_SORT_KEYS[sort].map(({ key, fixed }) => ({ column: key, desc: (fixed ?? order) === "desc" })), { column: "fingerprint", desc: false }];
}

const isDateKey = (key: SortKey) => key.column === "firstSeen" || key.column === "lastSeen";
const isTextKey = (key: SortKey) => key.column === "detailKey" || key.column === "fingerprint";
const columnSql = (key: SortKey) => Prisma.raw(`"${key.column}"`);

/** A page's cursor: the order it belongs to and its last group's keys. */
const cursorSchema = z.tuple([z.enum(RISK_SORTS), z.enum(["asc", "desc"])]).rest(z.union([z.number(), z.string()]));
export type KeyValue = number | string;

const badCursor = () => new BatonError("invalid_request", "cursor is not one this API returned for this sort and order; start again without it.", { field: "cursor" });

export function decodeCursor(text: string, sort: RiskSort, order: RiskOrder, keys: SortKey[]): KeyValue[] {
  let parsed: z.infer<typeof cursorSchema>;
  try {
    parsed = cursorSchema.parse(JSON.parse(Buffer.from(text, "base64url").toString("utf8")));
  } catch {
    throw badCursor();
  }
  const [cursorSort, cursorOrder, ...values] = parsed;
  const fits = values.length === keys.length && keys.every((key, index) => typeof values[index] === (isDateKey(key) || isTextKey(key) ? "string" : "number"));
  if (cursorSort !== sort || cursorOrder !== order || !fits) throw badCursor();
  if (keys.some((key, index) => isDateKey(key) && Number.isNaN(Date.parse(values[index] as string)))) throw badCursor();
  return values;
}

export const encodeCursor = (sort: RiskSort, order: RiskOrder, values: KeyValue[]) => Buffer.from(JSON.stringify([sort, order, ...values]), "utf8").toString("base64url");

/** Keyset paging: the groups strictly after `values` in the order of `keys`. */
function afterSql(keys: SortKey[], values: KeyValue[] | null): Prisma.Sql {
  if (!values) return Prisma.empty;
  const bound = (index: number) => (isDateKey(keys[index]!) ? new Date(values[index] as string) : values[index]);
  const branches = keys.map((key, index) => {
    const equal = keys.slice(0, index).map((prior, at) => Prisma.sql`${columnSql(prior)} = ${bound(at)}`);
    const beyond = Prisma.sql`${columnSql(key)} ${Prisma.raw(key.desc ? "<" : ">")} ${bound(index)}`;
    return Prisma.sql`(${Prisma.join([...equal, beyond], " AND ")})`;
  });
  return Prisma.sql`WHERE (${Prisma.join(branches, " OR ")})`;
}

/**
 * The risks of active packets as the list sees them, one row per thread and fingerprint
 * ("stated": its thread, severity rank, state now and the start of its detail), as SQL
 * common table expressions: the database sorts and counts, the server reads a page.
 */
function statedSql(q: string | undefined, now: Date): Prisma.Sql {
  return Prisma.sql`"rows" AS (
      SELECT t."id" AS "threadId", t."key" AS "threadKey", r."fingerprint" AS "fingerprint", v."receivedAt" AS "activeAt",
        ${severityRankSql('r."severity"')} AS "rank", LOWER(SUBSTR(r."detail", 1, ${DETAIL_KEY_CHARS})) AS "detailKey",
        ROW_NUMBER() OVER (PARTITION BY t."id", r."fingerprint" ORDER BY r."position") AS "nth"
      FROM "Thread" t
      JOIN "PacketVersion" v ON v."id" = t."activeVersionId"
      JOIN "Risk" r ON r."versionId" = v."id"
      WHERE t."archived" = ${false} ${riskTextFilter(q)}
    ),
    "pairs" AS (
      SELECT "threadId", MAX("threadKey") AS "threadKey", "fingerprint", MAX("activeAt") AS "activeAt", MAX("rank") AS "rank",
        MAX(CASE WHEN "nth" = 1 THEN "detailKey" END) AS "detailKey"
      FROM "rows" GROUP BY "threadId", "fingerprint"
    ),
    "stated" AS (
      SELECT p."threadId" AS "threadId", p."threadKey" AS "threadKey", p."fingerprint" AS "fingerprint", p."rank" AS "rank",
        p."detailKey" AS "detailKey", ${riskStateSql("rt", Prisma.raw('p."rank"'), Prisma.raw('p."activeAt"'), now)} AS "state"
      FROM "pairs" p LEFT JOIN "RiskTriage" rt ON rt."threadId" = p."threadId" AND rt."fingerprint" = p."fingerprint"
    )`;
}

export interface GroupRow {
  fingerprint: string;
  regressed: number | bigint;
  rank: number | bigint;
  detailKey: string;
  threads: number | bigint;
  firstSeen: string | Date;
  lastSeen: string | Date;
  occurrences: number | bigint;
}

/** The view's groups after the cursor, in order, with their keys and sizes: at most `limit` rows (all without). */
export function groupsSql(view: RiskFilters["state"], q: string | undefined, now: Date, keys: SortKey[], after: KeyValue[] | null, limit: number | undefined): Prisma.Sql {
  const visible = view === "open" ? Prisma.sql`WHERE "state" NOT IN (${HIDDEN_SQL})` : Prisma.empty;
  const orderBy = Prisma.raw(keys.map((key) => `"${key.column}" ${key.desc ? "DESC" : "ASC"}`).join(", "));
  return Prisma.sql`WITH ${statedSql(q, now)},
    "visible" AS (SELECT * FROM "stated" ${visible}),
    "histories" AS (
      SELECT s."threadId" AS "threadId", s."threadKey" AS "threadKey", s."fingerprint" AS "fingerprint", s."state" AS "state",
        s."rank" AS "rank", s."detailKey" AS "detailKey",
        MIN(v."receivedAt") AS "firstSeen", MAX(v."receivedAt") AS "lastSeen", COUNT(DISTINCT r."versionId") AS "occurrences"
      FROM "visible" s
      JOIN "Risk" r ON r."threadId" = s."threadId" AND r."fingerprint" = s."fingerprint"
      JOIN "PacketVersion" v ON v."id" = r."versionId"
      GROUP BY s."threadId", s."threadKey", s."fingerprint", s."state", s."rank", s."detailKey"
    ),
    "seen" AS (
      SELECT h.*, ROW_NUMBER() OVER (
          PARTITION BY h."fingerprint"
          ORDER BY (CASE WHEN h."state" = 'regressed' THEN 1 ELSE 0 END) DESC, h."rank" DESC, h."lastSeen" DESC, h."threadKey"
        ) AS "lead"
      FROM "histories" h
    ),
    "groups" AS (
      SELECT "fingerprint", MAX(CASE WHEN "state" = 'regressed' THEN 1 ELSE 0 END) AS "regressed", MAX("rank") AS "rank",
        MAX(CASE WHEN "lead" = 1 THEN "detailKey" END) AS "detailKey", COUNT(*) AS "threads",
        MIN("firstSeen") AS "firstSeen", MAX("lastSeen") AS "lastSeen", CAST(SUM("occurrences") AS INTEGER) AS "occurrences"
      FROM "seen" GROUP BY "fingerprint"
    )
    SELECT * FROM "groups" ${afterSql(keys, after)}
    ORDER BY ${orderBy}
    ${limit === undefined ? Prisma.empty : Prisma.sql`LIMIT ${limit}`}`;
}

/** The view's size: its groups, and the thread risks it leaves out. One aggregate, no history. */
export async function countGroups(view: RiskFilters["state"], q: string | undefined, now: Date): Promise<{ total: number; hidden: number }> {
  const sql = await sqlExecutor();
  const [row] = await sql.query<{ total: number | bigint; hidden: number | bigint }>(
    view === "open"
      ? Prisma.sql`WITH ${statedSql(q, now)}
          SELECT COUNT(DISTINCT CASE WHEN "state" NOT IN (${HIDDEN_SQL}) THEN "fingerprint" END) AS "total",
            COUNT(CASE WHEN "state" IN (${HIDDEN_SQL}) THEN 1 END) AS "hidden"
          FROM "stated"`
      : Prisma.sql`WITH ${statedSql(q, now)} SELECT COUNT(DISTINCT "fingerprint") AS "total", 0 AS "hidden" FROM "stated"`,
  );
  return { total: Number(row?.total ?? 0), hidden: Number(row?.hidden ?? 0) };
}

export const keyValuesOf = (row: GroupRow, keys: SortKey[]): KeyValue[] =>
  keys.map((key) => (isDateKey(key) ? asDate(row[key.column as "lastSeen"]).toISOString() : isTextKey(key) ? String(row[key.column as "fingerprint"]) : Number(row[key.column as "rank"])));
