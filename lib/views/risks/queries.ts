import "server-only";
import { sqlExecutor } from "../../db/client";
import { Prisma } from "../../generated/prisma/client";
import { RISK_STATES, needsAttention, type RiskState } from "./triage-state";
import { severityRank } from "../../contract/severity";
import { z } from "zod";
import { asDate, readActiveRisks, type ActiveRisk } from "./active-risks";
import { riskListDto, type RiskGroupDto, type RiskListDto, type RiskThreadDto, type TriageDto } from "./dto";
import { RISK_PAGE_MAX_BYTES, riskFiltersSchema, type RiskFilters } from "./filters";
import { BatonError } from "../../core/errors";
import { singleton } from "../../core/singleton";

/** The shapes live in ./dto (client-safe); importers of this module keep finding them here. */
export { riskGroupDto, riskListDto, riskThreadDto, type RiskGroupDto, type RiskListDto, type RiskThreadDto } from "./dto";

/** States the default view leaves out: a person already dealt with them (until they come back). */
const HIDDEN_BY_DEFAULT: ReadonlySet<RiskState> = new Set(["resolved", "snoozed"]);

interface History {
  firstSeen: Date;
  lastSeen: Date;
  occurrences: number;
}

const pairKey = (threadId: string, fingerprint: string) => `${threadId}\u0000${fingerprint}`;

/**
 * For each thread and fingerprint of an active packet: when a version of that
 * thread carrying it first and last arrived, and how many did. One grouped
 * statement over the (threadId, fingerprint) index.
 */
async function readHistories(): Promise<Map<string, History>> {
  const sql = await sqlExecutor();
  // The active pairs first (DISTINCT keeps SQLite from driving the join through the fingerprint index).
  const rows = await sql.query<{ threadId: string; fingerprint: string; firstSeen: string | Date; lastSeen: string | Date; occurrences: number | bigint }>(Prisma.sql`
    WITH "active" AS (
      SELECT DISTINCT a."threadId" AS "threadId", a."fingerprint" AS "fingerprint"
      FROM "Thread" t JOIN "Risk" a ON a."versionId" = t."activeVersionId"
      WHERE t."archived" = ${false}
    )
    SELECT r."threadId" AS "threadId", r."fingerprint" AS "fingerprint",
      MIN(v."receivedAt") AS "firstSeen", MAX(v."receivedAt") AS "lastSeen", COUNT(DISTINCT r."versionId") AS "occurrences"
    FROM "active" p
    JOIN "Risk" r ON r."threadId" = p."threadId" AND r."fingerprint" = p."fingerprint"
    JOIN "PacketVersion" v ON v."id" = r."versionId"
    GROUP BY r."threadId", r."fingerprint"`);
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

/** A group's place in the list, also a page's cursor: regressed, severity rank, last seen, fingerprint. */
const cursorSchema = z.tuple([z.boolean(), z.number().int(), z.string(), z.string()]);
type Cursor = z.infer<typeof cursorSchema>;

const cursorOf = (group: RiskGroupDto): Cursor => [group.regressed, severityRank(group.severity), group.last_seen, group.fingerprint];

/** Regressed groups on top, then by severity, then the most recently seen. */
function compareCursors([aRegressed, aRank, aSeen, aPrint]: Cursor, [bRegressed, bRank, bSeen, bPrint]: Cursor): number {
  return Number(bRegressed) - Number(aRegressed) || bRank - aRank || bSeen.localeCompare(aSeen) || aPrint.localeCompare(bPrint);
}

const compareGroups = (a: RiskGroupDto, b: RiskGroupDto) => compareCursors(cursorOf(a), cursorOf(b));

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

function matchesText(risk: ActiveRisk, text: string | undefined): boolean {
  if (!text) return true;
  const needle = text.toLowerCase();
  return [risk.detail, risk.threadKey, risk.agent ?? ""].some((value) => value.toLowerCase().includes(needle));
}

const encodeCursor = (cursor: Cursor) => Buffer.from(JSON.stringify(cursor), "utf8").toString("base64url");

function decodeCursor(text: string): Cursor {
  try {
    return cursorSchema.parse(JSON.parse(Buffer.from(text, "base64url").toString("utf8")));
  } catch {
    throw new BatonError("invalid_request", "cursor is not one this API returned; start again without it.", { field: "cursor" });
  }
}

/** Whole groups after `cursor`, up to `limit` thread risks and RISK_PAGE_MAX_BYTES of JSON (a larger group alone). */
function pageOf(groups: RiskGroupDto[], page: { cursor?: string; limit: number }) {
  const after = page.cursor ? decodeCursor(page.cursor) : null;
  // Keyset paging: a group that moved or came since starts no duplicate and skips nothing after the cursor.
  const start = after ? groups.findIndex((group) => compareCursors(cursorOf(group), after) > 0) : 0;
  const taken: RiskGroupDto[] = [];
  let rows = 0;
  let bytes = 0;
  for (let index = start < 0 ? groups.length : start; index < groups.length; index++) {
    const group = groups[index]!;
    // Details are free text (a packet may spend its megabyte on a few risks): the size counts, not only the rows.
    const size = Buffer.byteLength(JSON.stringify(group));
    if (taken.length && (rows + group.threads.length > page.limit || bytes + size > RISK_PAGE_MAX_BYTES)) break;
    taken.push(group);
    rows += group.threads.length;
    bytes += size;
  }
  const last = taken.at(-1);
  const more = last !== undefined && groups.indexOf(last) < groups.length - 1;
  return { groups: taken, next_cursor: more ? encodeCursor(cursorOf(last)) : null };
}

/**
 * The risks view (docs/product.md#risks): every risk of every active packet,
 * grouped by fingerprint across threads, regressed groups first, then by
 * severity. The default view hides resolved and snoozed risks; `state: "all"` shows them.
 * With `limit`, one page (cursor paging, riskListQuerySchema) of a sorted list kept for the
 * next pages (keptSortedGroups); without, every group, read now (for callers inside Baton
 * only: the API and the page always page).
 */
export async function listRisks(
  filters: Partial<RiskFilters> & { cursor?: string; limit?: number } = {},
  now = new Date(),
): Promise<RiskListDto> {
  const { state: view, q } = riskFiltersSchema.parse({ state: filters.state, q: filters.q });
  const list = filters.limit === undefined ? await sortedGroups(view, q, now) : await keptSortedGroups(view, q, now);
  const page = filters.limit === undefined ? { groups: list.groups, next_cursor: null } : pageOf(list.groups, { cursor: filters.cursor, limit: filters.limit });
  return riskListDto.parse({ generated_at: list.generatedAt, view, ...page, total: list.groups.length, hidden: list.hidden });
}

interface SortedGroups {
  groups: RiskGroupDto[];
  hidden: number;
  generatedAt: string;
}

/** Every active risk read, grouped and sorted: the work of a first page. */
async function sortedGroups(view: RiskFilters["state"], q: string | undefined, now: Date): Promise<SortedGroups> {
  const [risks, histories] = await Promise.all([readActiveRisks({ now }), readHistories()]);
  const byFingerprint = new Map<string, RiskThreadDto[]>();
  let hidden = 0;
  for (const risk of risks) {
    if (!matchesText(risk, q)) continue;
    if (view === "open" && HIDDEN_BY_DEFAULT.has(risk.state)) {
      hidden++;
      continue;
    }
    const threads = byFingerprint.get(risk.fingerprint) ?? [];
    threads.push(threadDtoOf(risk, histories.get(pairKey(risk.threadId, risk.fingerprint))));
    byFingerprint.set(risk.fingerprint, threads);
  }
  const groups = [...byFingerprint].map(([fingerprint, threads]) => groupOf(fingerprint, threads)).sort(compareGroups);
  return { groups, hidden, generatedAt: now.toISOString() };
}

/**
 * Risks change with the ledger (packets, triage) and with the clock (a snooze ending), as the
 * board does (lib/board/board-etag.ts): a sorted list is kept for the next pages ("Show more")
 * while the ledger's head and this clock step stay the same, so only a view's first page
 * reads every active risk.
 */
export const RISK_LIST_CLOCK_STEP_MS = 30_000;
/** Sorted lists kept (views and searches being paged at once); each is one moment's active risks. */
const KEPT_LISTS = 4;

const keptLists = singleton("RiskLists", () => new Map<string, Promise<SortedGroups>>());

async function keptSortedGroups(view: RiskFilters["state"], q: string | undefined, now: Date): Promise<SortedGroups> {
  const sql = await sqlExecutor();
  const [head] = await sql.query<{ seq: number | bigint | null }>(Prisma.sql`SELECT MAX("seq") AS "seq" FROM "LedgerEvent"`);
  const key = JSON.stringify([view, q ?? "", Number(head?.seq ?? 0), Math.floor(now.getTime() / RISK_LIST_CLOCK_STEP_MS)]);
  const kept = keptLists.get(key);
  if (kept) return kept;
  const made = sortedGroups(view, q, now);
  keptLists.set(key, made);
  for (const old of keptLists.keys()) {
    if (keptLists.size <= KEPT_LISTS) break;
    keptLists.delete(old);
  }
  made.catch(() => keptLists.get(key) === made && keptLists.delete(key));
  return made;
}
