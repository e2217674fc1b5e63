import { compareRiskGroups, risksDeltaDto, type RiskGroupDto, type RiskListDto } from "../views/risks/dto";

/**
 * A snooze that ends with the clock reopens a risk without a ledger event: the loaded
 * pages are read again this often (as the board does, lib/browser/board-delta.ts).
 */
export const RISKS_RESYNC_MS = 5 * 60_000;

/**
 * The risks list's loaded pages with a stream delta applied (lib/views/risks/risks-delta.ts,
 * docs/decisions/059-risks-deltas.md): the groups of the named threads replaced by the
 * server's, each page kept in the list's order, the counts taken from the delta. A group
 * that now sorts past the last loaded page waits for "Show more" (its cursor comes before it).
 * Null (refetch) when the delta asks for it, does not pass its schema, or touches a loaded
 * group shared with threads it does not name: that group's wording and severity are the server's to merge.
 */
export function applyRisksDelta(pages: readonly RiskListDto[], frame: unknown): RiskListDto[] | null {
  const parsed = risksDeltaDto.safeParse(frame);
  if (!parsed.success || parsed.data.refetch) return null;
  const delta = parsed.data;
  if (!delta.threads.length || !pages.length) return [...pages];
  const { sort, order } = pages[0]!;
  const compare = (a: RiskGroupDto, b: RiskGroupDto) => compareRiskGroups(a, b, sort, order);
  const named = new Set(delta.threads);
  const incoming = new Map(delta.groups.map((group) => [group.fingerprint, group]));
  const placed: RiskGroupDto[][] = [];
  for (const page of pages) {
    const kept: RiskGroupDto[] = [];
    for (const group of page.groups) {
      if (incoming.has(group.fingerprint)) continue;
      const theirs = group.threads.filter((thread) => named.has(thread.thread_key)).length;
      // None of its threads carries it any more (in this view): it leaves the list.
      if (theirs === group.threads.length && theirs > 0) continue;
      if (theirs > 0) return null;
      kept.push(group);
    }
    placed.push(kept);
  }
  const more = pages.at(-1)!.next_cursor !== null;
  for (const group of incoming.values()) {
    // The first page whose last group (as it was fetched) does not sort before it.
    const index = pages.findIndex((page) => {
      const last = page.groups.at(-1);
      return last !== undefined && compare(group, last) <= 0;
    });
    if (index >= 0) placed[index]!.push(group);
    else if (!more) placed.at(-1)!.push(group);
  }
  return pages.map((page, index) => ({
    ...page,
    generated_at: delta.generated_at,
    total: delta.total ?? page.total,
    hidden: delta.hidden ?? page.hidden,
    groups: placed[index]!.sort(compare),
  }));
}
