"use client";

import { RISK_SORT_FIRST_ORDER, type RiskGroupDto, type RiskOrder, type RiskSort } from "@/lib/views/risks/dto";
import { SortIcon } from "@/components/ui/icons";

type ColumnSort = Exclude<RiskSort, "attention">;

/** A header's sort button: its column's name; the arrow is decoration (aria-sort on the header says it). */
function SortButton({ column, label, sort, order, onSort }: { column: ColumnSort; label: string; sort: RiskSort; order: RiskOrder; onSort: (column: ColumnSort) => void }) {
  const active = sort === column;
  return (
    <button
      type="button"
      onClick={() => onSort(column)}
      className={`inline-flex min-h-6 items-center gap-1 rounded px-1 text-left text-xs font-semibold uppercase tracking-wide hover:text-fg focus-visible:outline-2 focus-visible:outline-focus ${active ? "text-fg" : "text-muted"}`}
    >
      {label}
      <SortIcon direction={active ? (order === "asc" ? "ascending" : "descending") : null} />
    </button>
  );
}

const ARIA_SORT = { asc: "ascending", desc: "descending" } as const;

/** The next order when a header is pressed: the other way on the sorted column, else that column's own first. */
export function nextSort(column: ColumnSort, sort: RiskSort, order: RiskOrder): { sort: ColumnSort; order: RiskOrder } {
  if (sort === column) return { sort, order: order === "asc" ? "desc" : "asc" };
  return { sort: column, order: RISK_SORT_FIRST_ORDER[column] };
}

interface RiskTableProps {
  groups: RiskGroupDto[];
  sort: RiskSort;
  order: RiskOrder;
  onSort: (column: ColumnSort) => void;
  canAct: boolean;
  row: (group: RiskGroupDto) => React.ReactNode;
}

/**
 * The risks as a dense table sorted by the server (docs/decisions/058-risks-paged-in-sql.md):
 * each sortable header holds a button, and aria-sort tells the sorted one. On a phone the
 * header becomes a row of sort buttons and each risk stacks its cells.
 */
export function RiskTable({ groups, sort, order, onSort, canAct, row }: RiskTableProps) {
  const header = (column: ColumnSort) => (sort === column ? ARIA_SORT[order] : undefined);
  const button = (column: ColumnSort, label: string) => <SortButton column={column} label={label} sort={sort} order={order} onSort={onSort} />;
  return (
    <table className="w-full border-collapse overflow-hidden rounded-lg bg-surface ring-1 ring-line max-lg:block lg:table-fixed">
      <caption className="sr-only">Risks{sort === "attention" ? ", regressed first, then by severity" : ""}</caption>
      <colgroup className="max-lg:hidden">
        <col className="w-8" />
        <col className="w-36" />
        <col />
        <col className="w-64" />
        <col className="w-28" />
        <col className="w-36" />
      </colgroup>
      <thead className="border-b border-line bg-sunken max-lg:block">
        <tr className="max-lg:flex max-lg:flex-wrap max-lg:items-center max-lg:gap-x-2 max-lg:px-2 max-lg:py-1">
          <th scope="col" className="max-lg:hidden">
            <span className="sr-only">{canAct ? "Selected" : ""}</span>
          </th>
          <th scope="col" aria-sort={header("severity")} className="px-1 py-1 text-left max-lg:block">
            {button("severity", "Severity")}
          </th>
          <th scope="col" aria-sort={header("detail")} className="px-1 py-1 text-left max-lg:block">
            {button("detail", "Detail")}
          </th>
          <th scope="col" aria-sort={header("threads")} className="px-1 py-1 text-left max-lg:block">
            {button("threads", "Threads")}
          </th>
          <th scope="col" aria-sort={header("first_seen") ?? header("last_seen")} className="px-1 py-1 text-left max-lg:flex">
            {button("first_seen", "First seen")}
            {button("last_seen", "Last seen")}
          </th>
          <th scope="col" aria-sort={header("occurrences")} className="px-1 py-1 text-right max-lg:block">
            {button("occurrences", "Occurrences")}
          </th>
        </tr>
      </thead>
      <tbody className="max-lg:block">{groups.map(row)}</tbody>
    </table>
  );
}
