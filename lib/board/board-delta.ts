import "server-only";
import { viewStreamQuery, viewStreamQuerySchema } from "../events/view-stream-query";
import { threadsNamedBy, type LedgerEventDto } from "../events/dto";
import { sharedFramesMade, viewDeltaFrame } from "../events/shared-frames";
import { threadFiltersSchema, type ThreadFilters } from "../views/threads/filters";
import { loadBoard } from "./board";
import { boardDeltaDto, type BoardDeltaDto } from "./dto";
import { readActiveThreadsAround } from "./watchdog/findings";

/**
 * The board's changes over the live stream (docs/decisions/064-board-deltas.md): for each batch
 * of ledger events the changed cards are placed once per distinct set of filters, by the
 * function the board uses (loadBoard with `keys`), and every stream asking for those filters
 * sends the same frame. No viewer makes the server read the whole board for an event.
 */

/** How many deltas this process has computed, of every view (bench:viewers and the tests compare it with the viewers). */
export const boardDeltasComputed = sharedFramesMade;

/** `?board=` of GET /api/v1/stream: the board's filters as its page URL has them (`q=…&severity=high`); empty for none. */
export const boardStreamQuerySchema = viewStreamQuerySchema("board", "the board's filters as a query string");

/** The filters named by `?board=`, or null when the stream does not ask for board deltas; 400 for bad filters. */
export function boardStreamFilters(board: string | undefined): ThreadFilters | null {
  return viewStreamQuery("board", board, threadFiltersSchema);
}

/** The card changes `events` made on a board with `filters`, placed now. */
export async function computeBoardDelta(events: readonly LedgerEventDto[], filters: ThreadFilters): Promise<BoardDeltaDto> {
  const seq = events.at(-1)?.seq ?? 0;
  const none = (refetch: boolean): BoardDeltaDto => ({ view: "board", seq, generated_at: new Date().toISOString(), upserts: [], removes: [], refetch });
  const keys = threadsNamedBy(events);
  if (keys === null) return none(true);
  if (!keys.length) return none(false);
  // A packet can start or end a duplicate topic on the threads of its project and branch: their cards are placed too.
  const peers = await readActiveThreadsAround(keys);
  const around = [...new Set([...keys, ...peers.map((thread) => thread.key)])];
  // Their keys are closed over their peers: the threads read around them are the same rows.
  const board = await loadBoard(filters, { keys: around, around: peers });
  const upserts = board.columns.flatMap((column) => column.cards);
  const placed = new Set(upserts.map((card) => card.key));
  return boardDeltaDto.parse({
    view: "board",
    seq,
    generated_at: board.generated_at,
    upserts,
    removes: around.filter((key) => !placed.has(key)),
    refetch: false,
  });
}

/**
 * The `event: delta` frame for a batch, computed once for every stream with the same filters
 * (a live batch reaches each stream as the same events). A failure is logged and told as a
 * refetch, never thrown into the stream.
 */
export function boardDeltaFrame(events: readonly LedgerEventDto[], filters: ThreadFilters): Promise<string> {
  return viewDeltaFrame("board", events, filters, () => computeBoardDelta(events, filters), (): BoardDeltaDto => ({
    view: "board", seq: events.at(-1)?.seq ?? 0, generated_at: new Date().toISOString(), upserts: [], removes: [], refetch: true,
  }));
}
