import "server-only";
import { readVerdict, type ReadVerdictOptions, type VerdictPointer, type VerdictReadingDto } from "./read";
import { singleton } from "../../core/singleton";
import { config } from "../../server/config";

/**
 * Verdict readings per packet version, so the board's badges do not read report
 * files on every render. Reports can change on disk, so the thread page asks
 * for `fresh: true`, which re-reads and replaces the entry.
 */

/** Room above the whole board's cards: versions that arrived since its last load stay until the next. */
const BOARD_HEADROOM = 1.25;

const board = singleton("VerdictCacheBoard", () => ({ cards: 0 }));

/**
 * How many readings the cache keeps: BATON_VERDICT_CACHE_ENTRIES (docs/configuration.md), or
 * more when the whole board shows more cards. Each board load reads every card's verdict in
 * turn, and a least-recently-used cache smaller than that cycle evicts each reading just before
 * the next load needs it: it would hit nothing. Active threads bound it, not history.
 */
export function verdictCacheLimit(): number {
  return Math.max(config().BATON_VERDICT_CACHE_ENTRIES, Math.ceil(board.cards * BOARD_HEADROOM));
}

/** The whole, unfiltered board just read the verdicts of `cards` active versions (lib/board/board.ts). */
export function fitVerdictCacheToBoard(cards: number): void {
  board.cards = cards;
}

export interface ReadVerdictCachedOptions extends ReadVerdictOptions {
  /** Re-read the files and update the cache (the thread page). */
  fresh?: boolean;
}

interface Entry {
  /** What the reading was made from: a different input for the same version is a miss. */
  input: string;
  /** Where it was read from (roots and sent reports): these can be added to a version later. */
  place: string;
  reading: Promise<VerdictReadingDto>;
}

/** The part of a reading's input that can change for a stored version: a root recorded later (decision 050). */
export function verdictPlaceKey(roots: readonly string[], attached: ReadonlyMap<string, string> | undefined): string {
  return JSON.stringify([roots, [...(attached?.keys() ?? [])]]);
}

// Map keeps insertion order: the first key is the least recently used. Kept on
// globalThis so the board and the thread page (separate route bundles) share it.
const entries = singleton("VerdictCache", () => new Map<string, Entry>());

export async function readVerdictCached(
  versionId: string,
  pointers: readonly VerdictPointer[] | undefined,
  roots: readonly string[],
  options: ReadVerdictCachedOptions = {},
): Promise<VerdictReadingDto> {
  const { fresh = false, ...readOptions } = options;
  const place = verdictPlaceKey(roots, readOptions.attached);
  const input = JSON.stringify([pointers ?? [], readOptions.inlineVerdict ?? null, readOptions.maxBytes ?? null, place]);
  const cached = entries.get(versionId);
  if (cached && !fresh && cached.input === input) {
    entries.delete(versionId);
    entries.set(versionId, cached);
    return cached.reading;
  }
  // The promise is stored at once, so concurrent renders of one version share one read.
  const entry: Entry = { input, place, reading: readVerdict(pointers, roots, readOptions) };
  entries.delete(versionId);
  entries.set(versionId, entry);
  const limit = verdictCacheLimit();
  while (entries.size > limit) {
    const oldest = entries.keys().next();
    if (oldest.done) break;
    entries.delete(oldest.value);
  }
  try {
    return await entry.reading;
  } catch (error) {
    if (entries.get(versionId) === entry) entries.delete(versionId);
    throw error;
  }
}

/** Forget one version's reading, or all of them. */
export function clearVerdictCache(versionId?: string): void {
  if (versionId === undefined) entries.clear();
  else entries.delete(versionId);
}

export function verdictCacheSize(): number {
  return entries.size;
}

/**
 * The cached reading of a version read from the same place: its pointers and inline
 * verdict never change, so the board can skip loading them when the cache has it.
 */
export function peekVerdictCached(versionId: string, place: string): Promise<VerdictReadingDto> | undefined {
  const entry = entries.get(versionId);
  return entry && entry.place === place ? entry.reading : undefined;
}
