import "server-only";
import { database } from "../../db/client";
import { inChunks } from "../../db/sql";
import type { Prisma } from "../../generated/prisma/client";
import { loadBoard } from "../../board/board";
import type { ThreadFilters } from "../threads/filters";
import { filterWhere } from "../threads/queries";
import { TIMELINE_LANES_MAX } from "./dto";
import { WINDOW_MS, type TimelineWindow } from "./window";

export interface LaneThread {
  id: string;
  key: string;
  agent: string | null;
  project: string | null;
  branch: string | null;
  topic: string | null;
}

/** The timeline's span: the window, ending now. */
export function timelineSpan(window: TimelineWindow, now: Date): { from: Date; to: Date } {
  return { from: new Date(now.getTime() - WINDOW_MS[window]), to: now };
}

/**
 * The threads the timeline shows: the board's (active threads matching its
 * filters), the most recently active first, at most TIMELINE_LANES_MAX. Flags
 * the board decides when placing cards (stale, verdicts, ...) are asked of the board itself.
 */
export async function findLaneThreads(filters: ThreadFilters, now: Date): Promise<{ threads: LaneThread[]; total: number }> {
  const db = await database();
  const select = { id: true, key: true, agent: true, project: true, branch: true, topic: true } as const;
  const orderBy: Prisma.ThreadOrderByWithRelationInput[] = [{ updatedAt: "desc" }, { id: "desc" }];
  if (filters.flag.length) {
    // The board's keys can be thousands: read them in chunks, then keep the most recent.
    const keys = (await loadBoard(filters, { now: now.getTime() })).columns.flatMap((column) => column.cards.map((card) => card.key));
    const rows = await inChunks(keys, (chunk) =>
      db.thread.findMany({ where: { key: { in: chunk } }, select: { ...select, updatedAt: true }, orderBy, take: TIMELINE_LANES_MAX }),
    );
    rows.sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime() || (b.id > a.id ? 1 : b.id < a.id ? -1 : 0));
    const threads = rows.slice(0, TIMELINE_LANES_MAX).map(({ id, key, agent, project, branch, topic }) => ({ id, key, agent, project, branch, topic }));
    return { threads, total: keys.length };
  }
  const where = filterWhere(filters);
  const [threads, total] = await Promise.all([
    db.thread.findMany({ where, select, orderBy, take: TIMELINE_LANES_MAX }),
    db.thread.count({ where }),
  ]);
  return { threads, total };
}

