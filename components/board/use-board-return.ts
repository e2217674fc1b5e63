"use client";

import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { BoardDto } from "@/lib/board/dto";

/** Where the keyboard is on the board: a column and a card's row in it. */
export interface Position {
  column: number;
  row: number;
}

/**
 * What Back from a thread gives back, per filtered view, for the tab's session: each column's
 * scroll offset, and the card the person was on (opened, or moved to), which becomes the
 * keyboard's place and gets the focus once every card is there, without scrolling.
 */
export function useBoardReturn(search: string, columns: BoardDto["columns"], position: Position | null, complete: boolean) {
  const [savedScroll] = useState(() => readScroll(search));
  const saveScroll = useCallback((columnId: string, offset: number) => writeScroll(search, columnId, offset), [search]);
  const [savedKey] = useState(() => readSessionValue(SELECTED_KEY(search)));
  const restored = useMemo(() => {
    const column = savedKey ? columns.findIndex((candidate) => candidate.cards.some((card) => card.key === savedKey)) : -1;
    return column < 0 ? null : { column, row: columns[column]!.cards.findIndex((card) => card.key === savedKey) };
  }, [columns, savedKey]);
  const selectedKey = position ? columns[position.column]?.cards[position.row]?.key : undefined;
  useEffect(() => {
    if (selectedKey) writeSessionValue(SELECTED_KEY(search), selectedKey);
  }, [search, selectedKey]);
  // Synchronises the DOM focus with the restored place (outside React), once: the card is in the
  // DOM only after its column has scrolled back to its offset, so a few frames are tried.
  const focusedBack = useRef(false);
  useEffect(() => {
    if (focusedBack.current || !savedKey || !complete || position) return;
    let frame = 0;
    let tries = 0;
    const attempt = () => {
      const link = document.querySelector<HTMLElement>(`[data-thread-key="${CSS.escape(savedKey)}"] a`);
      if (link) {
        focusedBack.current = true;
        link.focus({ preventScroll: true });
      } else if (++tries < FOCUS_TRIES) frame = requestAnimationFrame(attempt);
    };
    frame = requestAnimationFrame(attempt);
    return () => cancelAnimationFrame(frame);
  }, [complete, savedKey, position]);
  return { savedScroll, saveScroll, place: position ?? restored };
}

/** About a second of frames. */
const FOCUS_TRIES = 60;

const SELECTED_KEY = (search: string) => `baton:board-selected:${search}`;

function readSessionValue(key: string): string | null {
  if (typeof window === "undefined") return null;
  try {
    return window.sessionStorage.getItem(key);
  } catch {
    return null;
  }
}

function writeSessionValue(key: string, value: string) {
  try {
    window.sessionStorage.setItem(key, value);
  } catch {
    // Storage refused: Back starts from the first card, as before.
  }
}

/** Each column's scroll offset per filtered view, for the tab's session: Back from a thread lands where the person was. */
const SCROLL_KEY = (search: string) => `baton:board-scroll:${search}`;

function readScroll(search: string): Record<string, number> {
  if (typeof window === "undefined") return {};
  try {
    const saved: unknown = JSON.parse(window.sessionStorage.getItem(SCROLL_KEY(search)) ?? "{}");
    return saved && typeof saved === "object" ? (Object.fromEntries(Object.entries(saved).filter(([, offset]) => typeof offset === "number")) as Record<string, number>) : {};
  } catch {
    // Storage refused (private mode) or unreadable: start at the top.
    return {};
  }
}

function writeScroll(search: string, columnId: string, offset: number) {
  try {
    window.sessionStorage.setItem(SCROLL_KEY(search), JSON.stringify({ ...readScroll(search), [columnId]: Math.round(offset) }));
  } catch {
    // Storage refused: Back starts at the top, as before.
  }
}
