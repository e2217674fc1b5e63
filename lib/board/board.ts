import "server-only";
import { config } from "../server/config";
import { database } from "../db/client";
import { inChunks } from "../db/sql";
import type { Flag, FlagCode } from "../contract/lint";
import type { ThreadCardDto } from "../views/threads/dto";
import type { BoardCardDto, BoardDto } from "./dto";
import type { ThreadFilters } from "../views/threads/filters";
import { filterWhere } from "../views/threads/queries";
import { COLUMNS, COLUMN_TITLES, decideColumn, isStale, type Column } from "./columns";
import { fitVerdictCacheToBoard } from "../views/verdict/cache";
import type { VerdictSummaryDto } from "../views/verdict/dto";
import { readVerdictsAt } from "../views/verdict/version";
import { cardFlags, type CardFlagsDto } from "./flags";
import { riskAttentionByVersion, type RiskAttention } from "../views/risks/active-risks";
import { loadWatchdogFlags, type ActiveThreadRow } from "./watchdog/findings";
import { workFlags } from "../integrations/work-flags";
import type { ThreadWorkDto } from "../integrations/dto";
import type { CardUsageDto } from "../views/usage/dto";
import { sortColumn } from "./needs-groups";
import { readBoardCardRows, type BoardCardRow } from "./card-rows";

export { boardCardDto, boardDto, type BoardCardDto, type BoardDto } from "./dto";

/** Flags a card can gain or lose after ingest (clock, reports, people's answers): filtered on the placed card. */
const PLACED_FLAGS: ReadonlySet<FlagCode> = new Set([
  "stale",
  "verdict_failed",
  "verdict_missing",
  "open_questions",
  "duplicate_topic",
  "commit_regressed",
  "ci_failing",
  "changes_requested",
]);

const NO_RISK_ATTENTION: RiskAttention = { unacknowledgedSevere: 0, regressed: 0 };

/** What a card's flags are computed from, besides the card itself. */
interface FlagInputs {
  verdict: VerdictSummaryDto;
  watchdog: Flag[];
  work: ThreadWorkDto | null;
}

function timingOf(card: ThreadCardDto, now: number, staleHours: number) {
  return {
    now,
    staleMs: staleHours * 3_600_000,
    activeReceivedAt: Date.parse(card.active_packet.received_at),
    decision: card.active_packet.human.decision
      ? { kind: card.active_packet.human.decision.kind, at: Date.parse(card.active_packet.human.decision.at) }
      : null,
    lastSession: card.last_session ? { kind: card.last_session.kind, at: Date.parse(card.last_session.at) } : null,
  };
}

function flagsOf(card: ThreadCardDto, inputs: FlagInputs, timing: ReturnType<typeof timingOf>, staleHours: number): Flag[] {
  return cardFlags({
    stored: card.active_packet.flags,
    unansweredQuestions: card.active_packet.human.unanswered_questions,
    watchdog: inputs.watchdog,
    work: workFlags(inputs.work ?? undefined),
    verdict: inputs.verdict,
    stale: isStale(timing),
    staleHours,
  });
}

function placeCard(
  card: ThreadCardDto,
  inputs: FlagInputs & { risks: RiskAttention; usage: CardUsageDto | null },
  now: number,
  staleHours: number,
  computedAt: string,
): BoardCardDto {
  const { verdict, risks } = inputs;
  const timing = timingOf(card, now, staleHours);
  const flags = flagsOf(card, inputs, timing, staleHours);
  const decision = decideColumn({
    ...timing,
    flags: flags.map((flag) => flag.code),
    // Triage carries over by fingerprint (lib/views/risks/triage-state.ts): acknowledged, resolved or snoozed risks need nobody.
    unacknowledgedSevere: risks.unacknowledgedSevere,
    regressedRisks: risks.regressed,
  });
  return {
    ...card,
    active_packet: { ...card.active_packet, flags, flags_computed_at: computedAt },
    column: decision.column,
    column_reason: decision.reason,
    // The card shows the state and a few reasons; the thread page shows them all.
    verdict: { state: verdict.state, reasons: verdict.reasons.slice(0, 2) },
    attention: { unacknowledged_severe: risks.unacknowledgedSevere, regressed: risks.regressed },
    work: inputs.work,
    usage: inputs.usage,
  };
}

/**
 * The cards of `rows` with what their flags are computed from: the watchdog's flags
 * (lib/board/watchdog/findings.ts, started by the caller alongside the rows' read when it can:
 * they need the keys, not the rows), the code host's reports (lib/integrations) and the verdict
 * of each active version.
 */
async function readFlagInputs(
  rows: readonly BoardCardRow[],
  watchdogFlags: Promise<Map<string, Flag[]>>,
): Promise<{ row: BoardCardRow; inputs: FlagInputs }[]> {
  const [watchdog, verdicts] = await Promise.all([watchdogFlags, readVerdictsAt(rows.map((row) => row.place))]);
  return rows.map((row) => ({
    row,
    inputs: { verdict: verdicts.get(row.card.active_packet.id)!.summary, watchdog: watchdog.get(row.card.key) ?? [], work: row.work },
  }));
}

/**
 * Every card placed: its flags (lib/board/flags.ts) and column, from its flag inputs and the
 * triage of its risks; with what the packet's usage says.
 */
async function placeCards(rows: readonly BoardCardRow[], now: number, staleHours: number, watchdogFlags: Promise<Map<string, Flag[]>>): Promise<BoardCardDto[]> {
  const [withInputs, riskAttention] = await Promise.all([
    readFlagInputs(rows, watchdogFlags),
    riskAttentionByVersion(
      rows.map((row) => row.card.active_packet.id),
      new Date(now),
    ),
  ]);
  const computedAt = new Date(now).toISOString();
  return withInputs.map(({ row, inputs }) =>
    placeCard(row.card, { ...inputs, risks: riskAttention.get(row.card.active_packet.id) ?? NO_RISK_ATTENTION, usage: row.usage }, now, staleHours, computedAt),
  );
}

/**
 * The watchdog's flags started alongside the rows' read (they need only the keys): every
 * card's answer after ingest waits for the longer of the two, not both in turn.
 */
async function alongsideWatchdog<T>(rows: Promise<T>, watchdog: () => Promise<Map<string, Flag[]>>): Promise<[T, Promise<Map<string, Flag[]>>]> {
  const flags = watchdog();
  // Awaited by readFlagInputs; when the rows' read fails first, its rejection must not go unheard.
  flags.catch(() => undefined);
  return [await rows, flags];
}

/**
 * The flags each thread's card shows, archived threads included, computed as the board
 * computes them (the same inputs and function; no column, so no triage or usage is read):
 * what every other view (APIs, thread page, ingest answer) returns.
 */
export async function loadCardFlags(keys: readonly string[], options: { now?: number } = {}): Promise<Map<string, CardFlagsDto>> {
  const now = options.now ?? Date.now();
  const unique = [...new Set(keys)];
  if (!unique.length) return new Map();
  const [rows, watchdog] = await alongsideWatchdog(readBoardCardRows({ keys: unique, archived: true }), () => loadWatchdogFlags(unique));
  const staleHours = config().BATON_STALE_HOURS;
  const computedAt = new Date(now).toISOString();
  return new Map(
    (await readFlagInputs(rows, watchdog)).map(({ row: { card }, inputs }) => [
      card.key,
      { flags: flagsOf(card, inputs, timingOf(card, now, staleHours), staleHours), computed_at: computedAt },
    ]),
  );
}

/** A card row as the watchdog compares threads (lib/board/watchdog/findings.ts). */
const activeThreadOf = (row: BoardCardRow): ActiveThreadRow => ({
  id: row.threadId,
  key: row.card.key,
  project: row.card.project,
  branch: row.card.branch,
  topic: row.card.topic,
  taskId: row.card.active_packet.task_id,
  activeVersionId: row.card.active_packet.id,
});

/** The card rows of active threads matching `filters` (their stored parts), all or among `keys`. */
async function readMatchingRows(filters: ThreadFilters, keys: readonly string[] | undefined): Promise<BoardCardRow[]> {
  const narrowed = Object.values(filters).some((value) => (Array.isArray(value) ? value.length > 0 : value !== undefined && value !== ""));
  if (!narrowed) return readBoardCardRows({ keys });
  // The filters are Prisma's (lib/views/threads/queries.ts filterWhere, one place); the cards are read by key.
  const db = await database();
  const where = filterWhere(filters);
  const matching = keys
    ? await inChunks(keys, (chunk) => db.thread.findMany({ where: { ...where, key: { in: chunk } }, select: { key: true } }))
    : await db.thread.findMany({ where, select: { key: true } });
  return matching.length ? readBoardCardRows({ keys: matching.map((thread) => thread.key) }) : [];
}

/** Every active thread that matches the filters, placed in its column. Reads active threads only. */
export async function loadBoard(
  filters: ThreadFilters,
  options: {
    now?: number;
    cardsPerColumn?: number;
    /** Only these threads (one card's answer). */
    keys?: string[];
    /** readActiveThreadsAround(keys), when the caller has read it (the delta path, whose keys are already closed over their peers). */
    around?: readonly ActiveThreadRow[];
  } = {},
): Promise<BoardDto> {
  const now = options.now ?? Date.now();
  const limit = options.cardsPerColumn ?? Number.POSITIVE_INFINITY;
  const staleHours = config().BATON_STALE_HOURS;
  // Flags that depend on the clock or on reading the reports are filtered after placing.
  const storedFlags = filters.flag.filter((flag) => !PLACED_FLAGS.has(flag));
  const unfiltered = Object.values(filters).every((value) => value === undefined || value === "" || (Array.isArray(value) && !value.length));
  const matching = readMatchingRows({ ...filters, flag: storedFlags }, options.keys);
  // Unfiltered, the whole board's rows are every active thread: the watchdog's check covers them.
  // Otherwise it needs the keys only, and runs alongside the rows' read.
  const wholeBoard = unfiltered && !options.keys && !options.around;
  const [rows, watchdog] = wholeBoard
    ? await matching.then((read) => [read, loadWatchdogFlags(undefined, read.map(activeThreadOf))] as const)
    : await alongsideWatchdog(matching, () => loadWatchdogFlags(options.keys, options.around));
  // The whole board reads every card's verdict: the cache must hold them all to be of use.
  if (unfiltered && !options.keys) fitVerdictCacheToBoard(rows.length);
  const byColumn = new Map<Column, BoardCardDto[]>(COLUMNS.map((column) => [column, []]));
  for (const placed of await placeCards(rows, now, staleHours, watchdog)) {
    const shown = new Set(placed.active_packet.flags.map((flag) => flag.code));
    if (filters.flag.some((flag) => PLACED_FLAGS.has(flag) && !shown.has(flag))) continue;
    byColumn.get(placed.column)!.push(placed);
  }
  const columns = COLUMNS.map((id) => {
    const cards = sortColumn(id, byColumn.get(id)!);
    return { id, title: COLUMN_TITLES[id], count: cards.length, cards: cards.slice(0, limit) };
  });
  // Built from typed parts (toCard checks what is stored as text), so not parsed again here (docs/decisions/074-board-reads.md).
  const board: BoardDto = {
    generated_at: new Date(now).toISOString(),
    stale_hours: staleHours,
    total: columns.reduce((sum, column) => sum + column.count, 0),
    complete: columns.every((column) => column.cards.length === column.count),
    columns,
  };
  return board;
}
