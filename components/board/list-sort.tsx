import type { BoardCardDto } from "@/lib/board/dto";
import { severityRank } from "@/lib/contract/severity";
import { SortIcon } from "@/components/ui/icons";
import { FIRST_DIRECTION, type ListSort, type ListSortKey } from "./board-view";

const SORT_VALUE: Record<ListSortKey, (card: BoardCardDto) => number | string> = {
  severity: (card) => (card.active_packet.highest_severity ? severityRank(card.active_packet.highest_severity) : -1),
  agent: (card) => (card.agent ?? card.key).toLowerCase(),
  // Age grows as the received time goes back.
  age: (card) => -Date.parse(card.active_packet.received_at),
};

/** A group's rows in the list's sort; ties, and no sort, keep the board's order. */
export function sortListRows(cards: readonly BoardCardDto[], sort: ListSort | null): readonly BoardCardDto[] {
  if (!sort) return cards;
  const value = SORT_VALUE[sort.key];
  const sign = sort.descending ? -1 : 1;
  return cards
    .map((card, index) => ({ card, index, value: value(card) }))
    .sort((a, b) => (a.value < b.value ? -sign : a.value > b.value ? sign : a.index - b.index))
    .map((row) => row.card);
}

/** A column header that sorts the list by it: a button, its state in aria-sort; a third click goes back to the board's order. */
export function SortHeader({ label, sortKey, sort, onSort, className }: { label: string; sortKey: ListSortKey; sort: ListSort | null; onSort: (next: ListSort | null) => void; className?: string }) {
  const active = sort?.key === sortKey ? sort : null;
  const next = !active ? { key: sortKey, descending: FIRST_DIRECTION[sortKey] } : active.descending === FIRST_DIRECTION[sortKey] ? { key: sortKey, descending: !active.descending } : null;
  return (
    <th scope="col" aria-sort={active ? (active.descending ? "descending" : "ascending") : "none"} className={className}>
      <button type="button" onClick={() => onSort(next)} className="inline-flex min-h-6 items-center gap-1 rounded-sm hover:underline focus-visible:outline-2 focus-visible:outline-focus">
        {label}
        <SortIcon direction={active ? (active.descending ? "descending" : "ascending") : null} />
      </button>
    </th>
  );
}
