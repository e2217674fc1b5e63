import "server-only";
import { database } from "../../db/client";
import { inChunks } from "../../db/sql";
import type { Prisma } from "../../generated/prisma/client";
import { loadBoard } from "../../board/board";
import type { ThreadFilters } from "../threads/filters";
import { filterWhere } from "../threads/queries";
import { TIMELINE_LANES_MAX, compareTimelineLanes } from "./dto";
import { WINDOW_MS, type TimelineWindow } from "./window";

/** The timeline's span: the window, ending now. */
export function timelineSpan(window: TimelineWindow, now: Date): { from: Date; to: Date } {
  return { from: new Date(now.getTime() - WINDOW_MS[window]), to: now };
}

/** The columns of a lane's thread, read with Prisma. */
const select = { id: true, key: true, agent: true, project: true, branch: true, topic: true, updatedAt: true } satisfies Prisma.ThreadSelect;
export type LaneThread = Prisma.ThreadGetPayload<{ select: typeof select }>;
const orderBy: Prisma.ThreadOrderByWithRelationInput[] = [{ updatedAt: "desc" }, { key: "desc" }];
/** compareTimelineLanes on rows: the browser orders a delta's lanes by the same rule. */
const byActivity = (a: LaneThread, b: LaneThread) =>
  compareTimelineLanes({ active_at: a.updatedAt.toISOString(), key: a.key }, { active_at: b.updatedAt.toISOString(), key: b.key });

/**
 * The threads the timeline shows: the board's (active threads matching its
 * filters), the most recently active first, at most TIMELINE_LANES_MAX. Flags
 * the board decides when placing cards (stale, verdicts, ...) are asked of the board itself.
 */
export async function findLaneThreads(filters: ThreadFilters, now: Date): Promise<{ threads: LaneThread[]; total: number }> {
  const db = await database();
  if (filters.flag.length) {
    // The board's keys can be thousands: read them in chunks, then keep the most recent.
    const keys = (await loadBoard(filters, { now: now.getTime() })).columns.flatMap((column) => column.cards.map((card) => card.key));
    const rows = await inChunks(keys, (chunk) => db.thread.findMany({ where: { key: { in: chunk } }, select, orderBy, take: TIMELINE_LANES_MAX }));
    return { threads: rows.sort(byActivity).slice(0, TIMELINE_LANES_MAX), total: keys.length };
  }
  const where = filterWhere(filters);
  const [threads, total] = await Promise.all([db.thread.findMany({ where, select, orderBy, take: TIMELINE_LANES_MAX }), db.thread.count({ where })]);
  // SQL orders keys by the database's collation, the browser by code units: one order for both.
  return { threads: threads.sort(byActivity), total };
}

/**
 * Of `keys` (the threads a batch of events names), those that have a lane with these filters
 * now, and how many threads match in all (null with a flag filter: counting would place the
 * whole board). Reads only the named threads, and one count.
 */
export async function findChangedLaneThreads(
  filters: ThreadFilters,
  keys: readonly string[],
  now: Date,
): Promise<{ threads: LaneThread[]; total: number | null }> {
  const db = await database();
  let matching: string[] = [...keys];
  const where: Prisma.ThreadWhereInput = filters.flag.length ? {} : filterWhere(filters);
  if (filters.flag.length) {
    const board = await loadBoard(filters, { now: now.getTime(), keys: matching });
    matching = board.columns.flatMap((column) => column.cards.map((card) => card.key));
  }
  const [threads, total] = await Promise.all([
    inChunks(matching, (chunk) => db.thread.findMany({ where: { AND: [where, { key: { in: chunk } }] }, select })),
    filters.flag.length ? null : db.thread.count({ where }),
  ]);
  return { threads: threads.sort(byActivity), total };
}
