"use client";

import { useEffect, useEffectEvent } from "react";

/**
 * A page's keyboard shortcuts (docs/decisions/033-component-layer.md): one keydown listener
 * on the document, outside React's tree, so that they work wherever the focus is (a fresh
 * load leaves it on <body>). The handler sees every key; it decides what is its own.
 */
export function useDocumentKeys(onKeyDown: (event: KeyboardEvent) => void): void {
  const handle = useEffectEvent((event: KeyboardEvent) => onKeyDown(event));
  // Synchronises the listener with the component's life.
  useEffect(() => {
    const listener = (event: KeyboardEvent) => handle(event);
    document.addEventListener("keydown", listener);
    return () => document.removeEventListener("keydown", listener);
  }, []);
}
