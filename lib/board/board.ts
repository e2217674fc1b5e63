import "server-only";
import { config } from "../server/config";
import { database } from "../db/client";
import { inChunks } from "../db/sql";
import type { Flag, FlagCode } from "../contract/lint";
import type { ThreadCardDto } from "../views/threads/dto";
import { boardDto, type BoardCardDto, type BoardDto } from "./dto";
import type { ThreadFilters } from "../views/threads/filters";
import { cardSelect, filterWhere, toCards } from "../views/threads/queries";
import { COLUMNS, COLUMN_TITLES, decideColumn, type Column } from "./columns";
import { peekVerdictCached, readVerdictCached } from "../views/verdict/cache";
import type { VerdictSummaryDto } from "../views/verdict/dto";
import { workspaceRootsFor } from "../views/verdict/roots";
import { NO_ROOT_REASON } from "../views/verdict/read";
import type { CanonicalPacket } from "../contract/canonical";
import { riskAttentionByVersion, type RiskAttention } from "../views/risks/active-risks";
import { loadWatchdogFlags } from "./watchdog/findings";
import { compareBySeverity, compareNeedsYou } from "./needs-groups";

export { boardCardDto, boardDto, type BoardCardDto, type BoardDto } from "./dto";

/** Flags a card can gain or lose after ingest (clock, reports, people's answers): filtered on the placed card. */
const PLACED_FLAGS: ReadonlySet<FlagCode> = new Set([
  "stale",
  "verdict_failed",
  "verdict_missing",
  "open_questions",
  "duplicate_topic",
  "commit_regressed",
]);

const STALE_FLAG = (hours: number): Flag => ({
  code: "stale",
  reason: `Nothing new for more than ${hours} h: the agent may have stopped.`,
});

/**
 * Verdict flags from reading the reports, added to the ingest-time ones: a report
 * that failed puts the card in front of a person just as an inline verdict does.
 */
const REASON_MAX = 160;
const brief = (reasons: string[]) => {
  const text = reasons.join("; ");
  return text.length > REASON_MAX ? `${text.slice(0, REASON_MAX - 1)}…` : text;
};

function verdictFlags(flags: Flag[], verdict: VerdictSummaryDto): Flag[] {
  const codes = new Set(flags.map((flag) => flag.code));
  if (verdict.state === "fail" && !codes.has("verdict_failed")) {
    return [...flags, { code: "verdict_failed", reason: `Verdict failed: ${brief(verdict.reasons)}` }];
  }
  if (verdict.state === "missing" && !codes.has("verdict_missing")) {
    return [...flags, { code: "verdict_missing", reason: `No verdict could be read: ${brief(verdict.reasons.slice(0, 1))}` }];
  }
  return flags;
}

function withFlags(card: ThreadCardDto, flags: Flag[] | undefined): ThreadCardDto {
  return flags ? { ...card, active_packet: { ...card.active_packet, flags: [...card.active_packet.flags, ...flags] } } : card;
}

const NO_RISK_ATTENTION: RiskAttention = { unacknowledgedSevere: 0, regressed: 0 };

function placeCard(card: ThreadCardDto, verdict: VerdictSummaryDto, risks: RiskAttention, now: number, staleHours: number): BoardCardDto {
  const packet = { ...card.active_packet, flags: verdictFlags(card.active_packet.flags, verdict) };
  const decision = decideColumn({
    now,
    staleMs: staleHours * 3_600_000,
    activeReceivedAt: Date.parse(packet.received_at),
    flags: packet.flags.map((flag) => flag.code),
    // Triage carries over by fingerprint (lib/views/risks/triage-state.ts): acknowledged, resolved or snoozed risks need nobody.
    unacknowledgedSevere: risks.unacknowledgedSevere,
    regressedRisks: risks.regressed,
    decision: card.active_packet.human.decision
      ? { kind: card.active_packet.human.decision.kind, at: Date.parse(card.active_packet.human.decision.at) }
      : null,
    lastSession: card.last_session ? { kind: card.last_session.kind, at: Date.parse(card.last_session.at) } : null,
  });
  const flags = decision.stale ? [...packet.flags, STALE_FLAG(staleHours)] : packet.flags;
  return {
    ...card,
    active_packet: { ...packet, flags },
    column: decision.column,
    column_reason: decision.reason,
    // The card shows the state and a few reasons; the thread page shows them all.
    verdict: { state: verdict.state, reasons: verdict.reasons.slice(0, 2) },
    attention: { unacknowledged_severe: risks.unacknowledgedSevere, regressed: risks.regressed },
    verdict_unconfigured: verdict.state === "missing" && verdict.reasons.length > 0 && verdict.reasons.every((reason) => reason.endsWith(NO_ROOT_REASON)),
  };
}

/**
 * The verdict summary of each card's active version: from the cache, or read
 * once (the pointers come from the stored canonical form, fetched only for misses).
 */
async function readVerdicts(cards: ThreadCardDto[]): Promise<Map<string, VerdictSummaryDto>> {
  const summaries = new Map<string, VerdictSummaryDto>();
  const misses: string[] = [];
  for (const card of cards) {
    const cached = peekVerdictCached(card.active_packet.id);
    if (cached) summaries.set(card.active_packet.id, (await cached).summary);
    else misses.push(card.active_packet.id);
  }
  if (!misses.length) return summaries;
  const db = await database();
  const versions = await inChunks(misses, (ids) =>
    db.packetVersion.findMany({ where: { id: { in: ids } }, select: { id: true, canonicalJson: true, workspaceRoot: true, project: true } }),
  );
  await Promise.all(
    versions.map(async (version) => {
      const canonical = JSON.parse(version.canonicalJson) as CanonicalPacket;
      const roots = workspaceRootsFor({ workspaceRoot: version.workspaceRoot, project: version.project });
      const reading = await readVerdictCached(version.id, canonical.verdict_pointer, roots, { inlineVerdict: canonical.verdict });
      summaries.set(version.id, reading.summary);
    }),
  );
  return summaries;
}

/** Every active thread that matches the filters, placed in its column. Reads active threads only. */
export async function loadBoard(
  filters: ThreadFilters,
  options: { now?: number; cardsPerColumn?: number; /** Only these threads (one card's answer). */ keys?: string[] } = {},
): Promise<BoardDto> {
  const now = options.now ?? Date.now();
  const limit = options.cardsPerColumn ?? Number.POSITIVE_INFINITY;
  const db = await database();
  const staleHours = config().BATON_STALE_HOURS;
  // Flags that depend on the clock or on reading the reports are filtered after placing.
  const storedFlags = filters.flag.filter((flag) => !PLACED_FLAGS.has(flag));
  const where = filterWhere({ ...filters, flag: storedFlags });
  const rows = options.keys
    ? await inChunks(options.keys, (keys) => db.thread.findMany({ where: { ...where, key: { in: keys } }, select: cardSelect }))
    : await db.thread.findMany({ where, select: cardSelect });
  // Watchdog findings (lib/board/watchdog/findings.ts) join the flags a card carries before it is placed.
  const watchdogFlags = await loadWatchdogFlags(options.keys);
  const cards = (await toCards(rows)).map((card) => withFlags(card, watchdogFlags.get(card.key)));
  const [verdicts, riskAttention] = await Promise.all([
    readVerdicts(cards),
    riskAttentionByVersion(cards.map((card) => card.active_packet.id), new Date(now)),
  ]);
  const byColumn = new Map<Column, BoardCardDto[]>(COLUMNS.map((column) => [column, []]));
  for (const card of cards) {
    const placed = placeCard(card, verdicts.get(card.active_packet.id)!, riskAttention.get(card.active_packet.id) ?? NO_RISK_ATTENTION, now, staleHours);
    const shown = new Set(placed.active_packet.flags.map((flag) => flag.code));
    if (filters.flag.some((flag) => PLACED_FLAGS.has(flag) && !shown.has(flag))) continue;
    byColumn.get(placed.column)!.push(placed);
  }
  const columns = COLUMNS.map((id) => {
    const cards = byColumn.get(id)!.sort(id === "needs_you" ? compareNeedsYou : compareBySeverity);
    return { id, title: COLUMN_TITLES[id], count: cards.length, cards: cards.slice(0, limit) };
  });
  return boardDto.parse({
    generated_at: new Date(now).toISOString(),
    stale_hours: staleHours,
    total: columns.reduce((sum, column) => sum + column.count, 0),
    complete: columns.every((column) => column.cards.length === column.count),
    columns,
  });
}

