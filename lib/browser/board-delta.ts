import { boardDeltaDto, type BoardDto } from "../board/dto";
import { columnOrder } from "../board/needs-groups";

/**
 * How often a board that follows deltas is fetched whole all the same: a snooze ending moves a
 * card with the clock, with no ledger event to send a delta for (going stale has one). Each
 * viewer costs the server one board load per period: 200 viewers of 1,000 threads, about a
 * tenth of a core at 5 minutes.
 */
export const BOARD_RESYNC_MS = 5 * 60_000;

/**
 * The board with a stream delta applied (lib/board/board-delta.ts): changed cards replaced in
 * their column at their place in its order, counts and total recounted. Null when the delta
 * cannot be applied and the board must be refetched: it asks for that, it does not pass its
 * schema (a server newer or older than this page), or the board holds only each column's
 * first cards (a partial first paint, whose counts include cards it does not hold).
 */
export function applyBoardDelta(board: BoardDto, frame: unknown): BoardDto | null {
  const parsed = boardDeltaDto.safeParse(frame);
  if (!parsed.success || parsed.data.refetch || !board.complete) return null;
  const delta = parsed.data;
  const changed = new Set([...delta.removes, ...delta.upserts.map((card) => card.key)]);
  if (!changed.size) return board;
  const columns = board.columns.map((column) => {
    const added = delta.upserts.filter((card) => card.column === column.id);
    const kept = column.cards.filter((card) => !changed.has(card.key));
    // An untouched column keeps its identity: React skips it.
    if (!added.length && kept.length === column.cards.length) return column;
    const cards = [...kept, ...added].sort(columnOrder(column.id));
    return { ...column, count: cards.length, cards };
  });
  return { ...board, generated_at: delta.generated_at, total: columns.reduce((sum, column) => sum + column.count, 0), columns };
}
