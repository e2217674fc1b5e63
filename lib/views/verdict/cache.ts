import "server-only";
import { readVerdict, type ReadVerdictOptions, type VerdictPointer, type VerdictReadingDto } from "./read";
import { singleton } from "../../core/singleton";

/**
 * Verdict readings per packet version, so the board's badges do not read report
 * files on every render. Reports can change on disk, so the thread page asks
 * for `fresh: true`, which re-reads and replaces the entry.
 */

export const VERDICT_CACHE_MAX_ENTRIES = 2000;

export interface ReadVerdictCachedOptions extends ReadVerdictOptions {
  /** Re-read the files and update the cache (the thread page). */
  fresh?: boolean;
}

interface Entry {
  /** What the reading was made from: a different input for the same version is a miss. */
  input: string;
  reading: Promise<VerdictReadingDto>;
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
  // A version's attached reports never change: their paths name them.
  const input = JSON.stringify([pointers ?? [], roots, readOptions.inlineVerdict ?? null, readOptions.maxBytes ?? null, [...(readOptions.attached?.keys() ?? [])]]);
  const cached = entries.get(versionId);
  if (cached && !fresh && cached.input === input) {
    entries.delete(versionId);
    entries.set(versionId, cached);
    return cached.reading;
  }
  // The promise is stored at once, so concurrent renders of one version share one read.
  const entry: Entry = { input, reading: readVerdict(pointers, roots, readOptions) };
  entries.delete(versionId);
  entries.set(versionId, entry);
  while (entries.size > VERDICT_CACHE_MAX_ENTRIES) {
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
 * The cached reading of a version, without its inputs: versions are immutable,
 * so the board can skip loading a version's pointers when the cache has it.
 */
export function peekVerdictCached(versionId: string): Promise<VerdictReadingDto> | undefined {
  return entries.get(versionId)?.reading;
}
