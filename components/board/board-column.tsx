"use client";

import { useVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useMemo, useRef, useState } from "react";
import type { BoardCardDto } from "@/lib/board/dto";
import { groupNeedsYou } from "@/lib/board/needs-groups";
import { CountPill } from "@/components/ui/badge";
import { BoardCard } from "./board-card";
import { plural } from "./card-reasons";

interface BoardColumnProps {
  id: string;
  title: string;
  count: number;
  /** In the column's order (Needs you: by group, lib/board/needs-groups.ts). */
  cards: BoardCardDto[];
  now: number;
  /** Row of the focused card when the focus is in this column, else null. */
  focusedRow: number | null;
  /** Changes when the keyboard moved the focus to `focusedRow` (0 when it did not). */
  focusRequest: number;
  onFocusRow: (row: number) => void;
  canAct: boolean;
  /** Where the column was scrolled to when the person last left the board (restored once). */
  savedScroll?: number;
  onScrolled?: (offset: number) => void;
}

/** A virtual row: a group's heading, or up to `lanes` cards side by side. */
type Row = { kind: "group"; id: string; title: string; count: number | null } | { kind: "cards"; first: number; cards: BoardCardDto[] };

const ESTIMATED_ROW_HEIGHT = { group: 26, cards: 90 };
/** A wide column lays its cards out side by side, each lane at least this wide (px). */
const MIN_LANE_WIDTH = 340;
const MAX_LANES = 3;

/** Rows of `lanes` cards, under a heading per group for Needs you. Card indexes stay the column's order. */
function layoutRows(id: string, cards: BoardCardDto[], lanes: number, complete: boolean): Row[] {
  const rows: Row[] = [];
  const groups = id === "needs_you" ? groupNeedsYou(cards) : [{ id: "all", title: "", cards }];
  let first = 0;
  for (const group of groups) {
    // A partial first paint knows only its first cards: a group's count would be wrong, so none is shown.
    if (id === "needs_you") rows.push({ kind: "group", id: group.id, title: group.title, count: complete ? group.cards.length : null });
    for (let start = 0; start < group.cards.length; start += lanes) {
      rows.push({ kind: "cards", first: first + start, cards: group.cards.slice(start, start + lanes) });
    }
    first += group.cards.length;
  }
  return rows;
}

/** A column whose rows are virtualised: only the visible ones are in the DOM, even with 500 cards. */
export function BoardColumn({ id, title, count, cards, now, focusedRow, focusRequest, onFocusRow, canAct, savedScroll, onScrolled }: BoardColumnProps) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const cardRefs = useRef(new Map<number, HTMLAnchorElement>());
  const [width, setWidth] = useState(0);
  const lanes = Math.max(1, Math.min(MAX_LANES, Math.floor(width / MIN_LANE_WIDTH)));
  const complete = cards.length === count;
  const rows = useMemo(() => layoutRows(id, cards, lanes, complete), [id, cards, lanes, complete]);
  // eslint-disable-next-line react-hooks/incompatible-library -- the virtualizer's functions are not memoised; nothing here relies on them being stable.
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: (index) => ESTIMATED_ROW_HEIGHT[rows[index]?.kind ?? "cards"],
    overscan: 2,
    // The server renders the first screenful too (no scroll element there): the first paint has cards.
    initialRect: { width: 320, height: 900 },
    getItemKey: (index) => {
      const row = rows[index];
      return row?.kind === "group" ? `group:${row.id}` : row ? `${lanes}:${row.cards[0]!.key}` : index;
    },
  });

  // Synchronises the lanes with the column's width (the DOM's, outside React).
  useEffect(() => {
    const element = scrollRef.current;
    if (!element) return;
    const observer = new ResizeObserver(([entry]) => setWidth(entry!.contentRect.width));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  // Puts the column back where the person left it (the scroll position lives outside React),
  // once the cards that reach that far have arrived.
  const restored = useRef(false);
  const totalSize = virtualizer.getTotalSize();
  useEffect(() => {
    if (restored.current || !savedScroll || width === 0) return;
    if (!complete && totalSize < savedScroll) return;
    restored.current = true;
    virtualizer.scrollToOffset(savedScroll);
  }, [savedScroll, complete, totalSize, width, virtualizer]);

  // Synchronises the DOM focus (outside React) with a keyboard move. Only keyboard moves:
  // re-focusing a card the user clicked could take the focus back from the search box.
  useEffect(() => {
    if (focusedRow === null || focusRequest === 0) return;
    const rowIndex = rows.findIndex((row) => row.kind === "cards" && focusedRow >= row.first && focusedRow < row.first + row.cards.length);
    if (rowIndex >= 0) virtualizer.scrollToIndex(rowIndex, { align: "auto" });
    const frame = requestAnimationFrame(() => cardRefs.current.get(focusedRow)?.focus({ preventScroll: true }));
    return () => cancelAnimationFrame(frame);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- runs per keyboard move, not when a focus event moved the position.
  }, [focusRequest]);

  const headingId = `column-${id}`;
  const countPill = (
    <CountPill className="px-2 text-xs" label={plural(count, "card")}>
      {count}
    </CountPill>
  );
  if (cards.length === 0) {
    // An empty column is a narrow rail with its name and count: the width goes to the columns with cards.
    return (
      <section aria-labelledby={headingId} className="flex w-10 flex-none flex-col items-center gap-2 rounded-xl bg-sunken/60 py-3" data-column={id} data-empty="true">
        {countPill}
        <h2 id={headingId} className="text-xs font-semibold whitespace-nowrap text-muted [writing-mode:vertical-rl]">
          {title}
        </h2>
      </section>
    );
  }
  // Needs you is the column a person is here for: it takes twice the width of the others.
  const grow = id === "needs_you" ? "flex-[2]" : "flex-1";
  return (
    <section aria-labelledby={headingId} className={`flex min-h-0 min-w-[85vw] ${grow} basis-0 snap-start flex-col rounded-xl bg-sunken/60 md:min-w-64`} data-column={id}>
      <h2 id={headingId} className="flex items-baseline justify-between px-3 pt-2 pb-1.5 text-sm font-semibold">
        <span>{title}</span>
        {countPill}
      </h2>
      <div
        ref={scrollRef}
        className="min-h-0 flex-1 overflow-y-auto px-2 pb-2"
        role="list"
        aria-label={`${title} cards`}
        onScroll={onScrolled ? (event) => onScrolled(event.currentTarget.scrollTop) : undefined}
      >
        <div style={{ height: totalSize, position: "relative" }}>
          {virtualizer.getVirtualItems().map((item) => {
            const row = rows[item.index]!;
            const style = { position: "absolute", top: 0, left: 0, width: "100%", transform: `translateY(${item.start}px)` } as const;
            if (row.kind === "group") {
              // An item of the column's list itself: a list may hold nothing but items.
              return (
                <div key={item.key} role="listitem" data-index={item.index} ref={virtualizer.measureElement} style={style} className="pt-0.5 pb-1">
                  <h3 className="flex items-baseline gap-2 px-1 text-xs font-semibold tracking-wide text-strong uppercase" data-group={row.id}>
                    <span>{row.title}</span>{" "}
                    {row.count === null ? null : <span className="font-normal text-muted normal-case">{plural(row.count, "card")}</span>}
                  </h3>
                </div>
              );
            }
            return (
              <div
                key={item.key}
                data-index={item.index}
                ref={virtualizer.measureElement}
                style={{ ...style, gridTemplateColumns: `repeat(${lanes}, minmax(0, 1fr))` }}
                className="grid items-start gap-2 pb-2"
              >
                {row.cards.map((card, offset) => {
                  const index = row.first + offset;
                  return (
                    <div key={card.key} role="listitem">
                      <BoardCard
                        ref={(element) => {
                          if (element) cardRefs.current.set(index, element);
                          else cardRefs.current.delete(index);
                        }}
                        card={card}
                        now={now}
                        focused={focusedRow === index || (focusedRow === null && index === 0)}
                        onFocus={() => onFocusRow(index)}
                        canAct={canAct}
                      />
                    </div>
                  );
                })}
              </div>
            );
          })}
        </div>
      </div>
    </section>
  );
}
