import "server-only";
import { sqlExecutor } from "../../db/client";
import { Prisma } from "../../generated/prisma/client";
import { RISK_STATES, needsAttention } from "./triage-state";
import { severityRank } from "../../contract/severity";
import { asDate, readActiveRisks, type ActiveRisk } from "./active-risks";
import { RISK_SORT_FIRST_ORDER, riskListDto, type RiskGroupDto, type RiskListDto, type RiskThreadDto, type TriageDto } from "./dto";
import { RISK_PAGE_MAX_BYTES, riskFiltersSchema, type RiskFilters } from "./filters";
import { inChunks } from "../../db/sql";
import { countGroups, decodeCursor, encodeCursor, groupsSql, HIDDEN_BY_DEFAULT, keyValuesOf, sortKeys, type GroupRow } from "./list-sql";


/** The shapes live in ./dto (client-safe); importers of this module keep finding them here. */
export { riskGroupDto, riskListDto, riskThreadDto, type RiskGroupDto, type RiskListDto, type RiskThreadDto } from "./dto";

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
