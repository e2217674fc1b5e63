"use client";

import { useEffect, useRef, useState } from "react";

const STEPS: Record<string, number> = { j: 1, ArrowDown: 1, k: -1, ArrowUp: -1 };

/** The item that is current: remembered by key, and by position for when that item is gone. */
interface Current {
  key: string;
  index: number;
}

/** What the list gives one item: whether it is current, and the attributes that make it the list's one tab stop when it is. */
export interface RovingItem {
  current: boolean;
  attributes: {
    ref: (element: HTMLElement | null) => void;
    tabIndex: 0 | -1;
    "aria-current": "true" | undefined;
    /** The focus landed on it (a click, Tab): it becomes current. */
    onFocus: () => void;
  };
}

/**
 * A list with one current item (roving focus: only it is in the tab order), as the risks
 * and the questions inbox have: j/k or the arrows move it (see `step`), and the DOM focus
 * follows a move only when asked to (a key press, a finished action), never a focus event.
 * `keys` are the items' keys in the order they appear on screen.
 */
export function useRovingList(keys: readonly string[]) {
  const [current, setCurrent] = useState<Current | null>(null);
  // Counts moves that must move the DOM focus; focus events only follow.
  const [focusRequest, setFocusRequest] = useState(0);
  const listRef = useRef<HTMLDivElement>(null);
  const emptyRef = useRef<HTMLParagraphElement>(null);
  const items = useRef(new Map<string, HTMLElement>());

  const found = current ? keys.indexOf(current.key) : -1;
  // A current item gone (answered, triaged) gives way to the one now in its place.
  const currentIndex = keys.length === 0 ? -1 : found >= 0 ? found : Math.min(current?.index ?? 0, keys.length - 1);
  const currentKey = keys[currentIndex] ?? null;

  // Synchronises the DOM focus (outside React) with a requested move.
  useEffect(() => {
    if (focusRequest === 0) return;
    if (currentKey !== null) items.current.get(currentKey)?.focus();
    else emptyRef.current?.focus();
    // eslint-disable-next-line react-hooks/exhaustive-deps -- runs per request, not when the focus moved the current item.
  }, [focusRequest]);

  const focusCurrent = () => setFocusRequest((count) => count + 1);
  const moveTo = (index: number) => {
    const key = keys[index];
    if (key === undefined) return;
    setCurrent({ key, index });
    focusCurrent();
  };

  const bindItem = (key: string) => (element: HTMLElement | null) => {
    if (element) items.current.set(key, element);
    else items.current.delete(key);
  };
  const follow = (key: string) => {
    const index = keys.indexOf(key);
    if (current?.key !== key || current.index !== index) setCurrent({ key, index });
  };

  return {
    currentIndex,
    currentKey,
    listRef,
    emptyRef,
    /** The item `key`'s part in the list. */
    item: (key: string): RovingItem => {
      const isCurrent = key === currentKey;
      return { current: isCurrent, attributes: { ref: bindItem(key), tabIndex: isCurrent ? 0 : -1, "aria-current": isCurrent ? "true" : undefined, onFocus: () => follow(key) } };
    },
    itemElement: (key: string) => items.current.get(key),
    /** Makes `key` current (at `index`), or none; `focus` moves the DOM focus there. */
    place: (key: string | null, index = 0, focus = false) => {
      setCurrent(key === null ? null : { key, index });
      if (focus) focusCurrent();
    },
    focusCurrent,
    /**
     * j/k and the arrows, wherever the focus is: the first press brings the focus to the
     * current item, later ones move from it. True when the key was a step (handled).
     */
    step: (event: KeyboardEvent): boolean => {
      const step = STEPS[event.key];
      if (step === undefined) return false;
      if (currentIndex < 0) return true;
      event.preventDefault();
      const inList = listRef.current?.contains(event.target as Node) ?? false;
      moveTo(inList ? Math.max(0, Math.min(keys.length - 1, currentIndex + step)) : currentIndex);
      return true;
    },
  };
}
