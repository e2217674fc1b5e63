"use client";

import { useVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useRef } from "react";
import type { BoardCardDto } from "@/lib/board/dto";
import { CountPill } from "@/components/ui/badge";
import { BoardCard } from "./board-card";

interface BoardColumnProps {
  id: string;
  title: string;
  count: number;
  cards: BoardCardDto[];
  now: number;
  /** Row of the focused card when the focus is in this column, else null. */
  focusedRow: number | null;
  /** Changes when the keyboard moved the focus to `focusedRow` (0 when it did not). */
  focusRequest: number;
  onFocusRow: (row: number) => void;
  canAct: boolean;
}

const ESTIMATED_CARD_HEIGHT = 170;

/** A column whose cards are virtualised: only the visible ones are in the DOM, even with 500. */
export function BoardColumn({ id, title, count, cards, now, focusedRow, focusRequest, onFocusRow, canAct }: BoardColumnProps) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const cardRefs = useRef(new Map<number, HTMLAnchorElement>());
  // eslint-disable-next-line react-hooks/incompatible-library -- the virtualizer's functions are not memoised; nothing here relies on them being stable.
  const virtualizer = useVirtualizer({
    count: cards.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ESTIMATED_CARD_HEIGHT,
    overscan: 2,
    // The server renders the first screenful too (no scroll element there): the first paint has cards.
    initialRect: { width: 320, height: 900 },
    getItemKey: (index) => cards[index]?.key ?? index,
  });

  // Synchronises the DOM focus (outside React) with a keyboard move. Only keyboard moves:
  // re-focusing a card the user clicked could take the focus back from the search box.
  useEffect(() => {
    if (focusedRow === null || focusRequest === 0) return;
    virtualizer.scrollToIndex(focusedRow, { align: "auto" });
    const frame = requestAnimationFrame(() => cardRefs.current.get(focusedRow)?.focus({ preventScroll: true }));
    return () => cancelAnimationFrame(frame);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- runs per keyboard move, not when a focus event moved the position.
  }, [focusRequest]);

  const headingId = `column-${id}`;
  const countPill = (
    <CountPill className="px-2 text-xs" label={`${count} ${count === 1 ? "card" : "cards"}`}>
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
  return (
    <section aria-labelledby={headingId} className="flex min-h-0 min-w-[85vw] flex-1 basis-0 snap-start flex-col rounded-xl bg-sunken/60 md:min-w-64" data-column={id}>
      <h2 id={headingId} className="flex items-baseline justify-between px-3 pt-3 pb-2 text-sm font-semibold">
        <span>{title}</span>
        {countPill}
      </h2>
      <div ref={scrollRef} className="min-h-0 flex-1 overflow-y-auto px-2 pb-2" role="list" aria-label={`${title} cards`}>
        <div style={{ height: virtualizer.getTotalSize(), position: "relative" }}>
          {virtualizer.getVirtualItems().map((item) => {
            const card = cards[item.index]!;
            return (
              <div
                key={item.key}
                role="listitem"
                data-index={item.index}
                ref={virtualizer.measureElement}
                style={{ position: "absolute", top: 0, left: 0, width: "100%", transform: `translateY(${item.start}px)` }}
                className="pb-2"
              >
                <BoardCard
                  ref={(element) => {
                    if (element) cardRefs.current.set(item.index, element);
                    else cardRefs.current.delete(item.index);
                  }}
                  card={card}
                  now={now}
                  focused={focusedRow === item.index || (focusedRow === null && item.index === 0)}
                  onFocus={() => onFocusRow(item.index)}
                  canAct={canAct}
                />
              </div>
            );
          })}
        </div>
      </div>
    </section>
  );
}
