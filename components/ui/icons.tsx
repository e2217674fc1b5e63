import { ArrowDown, ArrowUp, ArrowUpDown, ChevronDown, ChevronRight } from "lucide-react";

/**
 * The icons every screen uses, from one maintained set (lucide-react, docs/decisions/066-icons.md):
 * decoration beside words that already say it, so hidden from assistive technology; sized by
 * the text around them.
 */
const ICON = { "aria-hidden": true, focusable: false, className: "size-[1em] shrink-0" } as const;

/** A sortable header's state: sorted one way, the other, or not (both arrows). */
export function SortIcon({ direction }: { direction: "ascending" | "descending" | null }) {
  if (direction === "ascending") return <ArrowUp {...ICON} />;
  if (direction === "descending") return <ArrowDown {...ICON} />;
  return <ArrowUpDown {...ICON} className={`${ICON.className} opacity-60`} />;
}

/** A fold's state: open (pointing down) or closed (pointing right). */
export function FoldIcon({ open }: { open: boolean }) {
  return open ? <ChevronDown {...ICON} /> : <ChevronRight {...ICON} />;
}
