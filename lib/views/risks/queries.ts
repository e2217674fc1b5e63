import "server-only";
import { sqlExecutor } from "../../db/client";
import { Prisma } from "../../generated/prisma/client";
import { RISK_STATES, needsAttention, type RiskState } from "./triage-state";
import { severityRank } from "../../contract/severity";
import { z } from "zod";
import { asDate, readActiveRisks, riskTextFilter, type ActiveRisk } from "./active-risks";
import { DETAIL_KEY_CHARS, RISK_SORT_FIRST_ORDER, RISK_SORT_KEYS, RISK_SORTS, riskListDto, type RiskSortKey, type RiskGroupDto, type RiskListDto, type RiskOrder, type RiskSort, type RiskThreadDto, type TriageDto } from "./dto";
import { RISK_PAGE_MAX_BYTES, riskFiltersSchema, type RiskFilters } from "./filters";
import { BatonError } from "../../core/errors";
import { inChunks } from "../../db/sql";
import { riskStateSql, severityRankSql } from "./state-sql";

/** The shapes live in ./dto (client-safe); importers of this module keep finding them here. */
export { riskGroupDto, riskListDto, riskThreadDto, type RiskGroupDto, type RiskListDto, type RiskThreadDto } from "./dto";

/** States the default view leaves out: a person already dealt with them (until they come back). */
const HIDDEN_BY_DEFAULT: ReadonlySet<RiskState> = new Set(["resolved", "snoozed"]);
const HIDDEN_SQL = Prisma.raw([...HIDDEN_BY_DEFAULT].map((state) => `'${state}'`).join(", "));
interface History {
  firstSeen: Date;
  lastSeen: Date;
  occurrences: number;
}

const pairKey = (threadId: string, fingerprint: string) => `${threadId}\u0000${fingerprint}`;

/**
 * For each thread carrying one of `fingerprints` in any version: when a version carrying it
 * first and last arrived, and how many did. Grouped statements over the fingerprint index, a page's worth.
 */
async function readHistories(fingerprints: readonly string[]): Promise<Map<string, History>> {
  const sql = await sqlExecutor();
  const rows = await inChunks(fingerprints, (prints) =>
    sql.query<{ threadId: string; fingerprint: string; firstSeen: string | Date; lastSeen: string | Date; occurrences: number | bigint }>(Prisma.sql`
      SELECT r."threadId" AS "threadId", r."fingerprint" AS "fingerprint",
        MIN(v."receivedAt") AS "firstSeen", MAX(v."receivedAt") AS "lastSeen", COUNT(DISTINCT r."versionId") AS "occurrences"
      FROM "Risk" r JOIN "PacketVersion" v ON v."id" = r."versionId"
      WHERE r."fingerprint" IN (${Prisma.join(prints)})
      GROUP BY r."threadId", r."fingerprint"`),
  );
  return new Map(
    rows.map((row) => [
      pairKey(row.threadId, row.fingerprint),
      { firstSeen: asDate(row.firstSeen), lastSeen: asDate(row.lastSeen), occurrences: Number(row.occurrences) },
    ]),
  );
}

function triageDtoOf(risk: ActiveRisk): TriageDto | null {
  if (!risk.triage) return null;
  return {
    state: risk.triage.state,
    snoozed_until: risk.triage.snoozedUntil?.toISOString() ?? null,
    severity_at_triage: risk.triage.severityAtTriage,
    by: risk.triage.updatedBy,
    at: risk.triage.updatedAt.toISOString(),
  };
}

function threadDtoOf(risk: ActiveRisk, history: History | undefined): RiskThreadDto {
  // A packet that arrived between the two reads has no history yet: it is its own first sighting.
  const seen = history ?? { firstSeen: risk.activeReceivedAt, lastSeen: risk.activeReceivedAt, occurrences: 1 };
  return {
    thread_key: risk.threadKey,
    agent: risk.agent,
    packet_id: risk.versionId,
    severity: risk.severity,
    severity_raw: risk.severityRaw,
    detail: risk.detail,
    mitigation: risk.mitigation,
    state: risk.state,
    needs_attention: needsAttention(risk.state),
    triage: triageDtoOf(risk),
    first_seen: seen.firstSeen.toISOString(),
    last_seen: seen.lastSeen.toISOString(),
    occurrences: seen.occurrences,
  };
}

/** Within a group: regressed first, then the most severe, then the most recently seen. */
function compareThreads(a: RiskThreadDto, b: RiskThreadDto): number {
  return (
    Number(b.state === "regressed") - Number(a.state === "regressed") ||
    severityRank(b.severity) - severityRank(a.severity) ||
    b.last_seen.localeCompare(a.last_seen) ||
    a.thread_key.localeCompare(b.thread_key)
  );
}

function groupOf(fingerprint: string, threads: RiskThreadDto[]): RiskGroupDto {
  threads.sort(compareThreads);
  const lead = threads[0]!;
  const states = new Set(threads.map((thread) => thread.state));
  return {
    fingerprint,
    severity: threads.reduce((best, thread) => (severityRank(thread.severity) > severityRank(best) ? thread.severity : best), lead.severity),
    detail: lead.detail,
    regressed: states.has("regressed"),
    needs_attention: threads.some((thread) => thread.needs_attention),
    states: RISK_STATES.filter((state) => states.has(state)),
    first_seen: threads.reduce((first, thread) => (thread.first_seen < first ? thread.first_seen : first), lead.first_seen),
    last_seen: threads.reduce((last, thread) => (thread.last_seen > last ? thread.last_seen : last), lead.last_seen),
    occurrences: threads.reduce((sum, thread) => sum + thread.occurrences, 0),
    threads,
  };
}

/** A column of the groups' statement the list is ordered by. */
interface SortKey {
  column: RiskSortKey | "fingerprint";
  desc: boolean;
}

/** The keys of each order (RISK_SORT_KEYS), the last always the fingerprint (ascending) so that every group has one place. */
function sortKeys(sort: RiskSort, order: RiskOrder): SortKey[] {
  return [...RISK_SORT_KEYS[sort].map(({ key, fixed }) => ({ column: key, desc: (fixed ?? order) === "desc" })), { column: "fingerprint", desc: false }];
}

const isDateKey = (key: SortKey) => key.column === "firstSeen" || key.column === "lastSeen";
const isTextKey = (key: SortKey) => key.column === "detailKey" || key.column === "fingerprint";
const columnSql = (key: SortKey) => Prisma.raw(`"${key.column}"`);

/** A page's cursor: the order it belongs to and its last group's keys. */
const cursorSchema = z.tuple([z.enum(RISK_SORTS), z.enum(["asc", "desc"])]).rest(z.union([z.number(), z.string()]));
type KeyValue = number | string;

const badCursor = () => new BatonError("invalid_request", "cursor is not one this API returned for this sort and order; start again without it.", { field: "cursor" });

function decodeCursor(text: string, sort: RiskSort, order: RiskOrder, keys: SortKey[]): KeyValue[] {
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

const encodeCursor = (sort: RiskSort, order: RiskOrder, values: KeyValue[]) => Buffer.from(JSON.stringify([sort, order, ...values]), "utf8").toString("base64url");

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

interface GroupRow {
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
function groupsSql(view: RiskFilters["state"], q: string | undefined, now: Date, keys: SortKey[], after: KeyValue[] | null, limit: number | undefined): Prisma.Sql {
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

const keyValuesOf = (row: GroupRow, keys: SortKey[]): KeyValue[] =>
  keys.map((key) => (isDateKey(key) ? asDate(row[key.column as "lastSeen"]).toISOString() : isTextKey(key) ? String(row[key.column as "fingerprint"]) : Number(row[key.column as "rank"])));

/** The page's groups in full: their threads' risks (matching the text, in the view) and histories. A page's worth of reads. */
export async function groupsOf(fingerprints: string[], view: RiskFilters["state"], q: string | undefined, now: Date): Promise<Map<string, RiskGroupDto>> {
  const [risks, histories] = await Promise.all([readActiveRisks({ now, fingerprints, text: q }), readHistories(fingerprints)]);
  const byFingerprint = new Map<string, RiskThreadDto[]>();
  for (const risk of risks) {
    if (view === "open" && HIDDEN_BY_DEFAULT.has(risk.state)) continue;
    const threads = byFingerprint.get(risk.fingerprint) ?? [];
    threads.push(threadDtoOf(risk, histories.get(pairKey(risk.threadId, risk.fingerprint))));
    byFingerprint.set(risk.fingerprint, threads);
  }
  return new Map([...byFingerprint].map(([fingerprint, threads]) => [fingerprint, groupOf(fingerprint, threads)]));
}

/**
 * The risks view (docs/product.md#risks): every risk of every active packet, grouped by
 * fingerprint across threads, in the asked order (the default: regressed first, then by
 * severity, then the most recently seen). The default view hides resolved and snoozed risks;
 * `state: "all"` shows them. With `limit`, one page: whole groups after `cursor`, up to `limit`
 * thread risks and RISK_PAGE_MAX_BYTES of JSON (a larger group alone). The database sorts,
 * pages (keyset) and counts (docs/decisions/058-risks-paged-in-sql.md); the server reads
 * and sends a page's rows. Without `limit`, every group (for callers inside Baton only).
 */
export async function listRisks(
  filters: Partial<RiskFilters> & { cursor?: string; limit?: number } = {},
  now = new Date(),
): Promise<RiskListDto> {
  const { state: view, q, sort, order: asked } = riskFiltersSchema.parse({ state: filters.state, q: filters.q, sort: filters.sort, order: filters.order });
  const order = asked ?? RISK_SORT_FIRST_ORDER[sort];
  const keys = sortKeys(sort, order);
  const after = filters.cursor ? decodeCursor(filters.cursor, sort, order, keys) : null;
  const { limit } = filters;
  const sql = await sqlExecutor();
  // One row more than a page can hold says whether another page follows (every group has a thread).
  const [rows, counts] = await Promise.all([
    sql.query<GroupRow>(groupsSql(view, q, now, keys, after, limit === undefined ? undefined : limit + 1)),
    countGroups(view, q, now),
  ]);
  const candidates: GroupRow[] = [];
  let threadCount = 0;
  for (const row of rows) {
    if (limit !== undefined && candidates.length && threadCount + Number(row.threads) > limit) break;
    candidates.push(row);
    threadCount += Number(row.threads);
  }
  const full = await groupsOf(candidates.map((row) => row.fingerprint), view, q, now);
  const groups: RiskGroupDto[] = [];
  let lastPassed: GroupRow | null = null;
  let bytes = 0;
  for (const row of candidates) {
    const group = full.get(row.fingerprint);
    // Gone since the groups' statement (a packet dropped it): the page passes it.
    if (!group) {
      lastPassed = row;
      continue;
    }
    // Details are free text (a packet may spend its megabyte on a few risks): the size counts, not only the rows.
    const size = limit === undefined ? 0 : Buffer.byteLength(JSON.stringify(group));
    if (groups.length && bytes + size > RISK_PAGE_MAX_BYTES) break;
    groups.push(group);
    lastPassed = row;
    bytes += size;
  }
  const more = lastPassed !== null && rows.indexOf(lastPassed) < rows.length - 1;
  const next_cursor = more ? encodeCursor(sort, order, keyValuesOf(lastPassed!, keys)) : null;
  return riskListDto.parse({ generated_at: now.toISOString(), view, sort, order, groups, next_cursor, total: counts.total, hidden: counts.hidden });
}
