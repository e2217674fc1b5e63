"use client";

import type { KeyboardEvent, ReactNode } from "react";

/**
 * A non-modal dialog in the page's flow (the snooze choice): role="dialog" with a name,
 * Esc closes it (and goes no further, so a list's own Esc does not fire too). The caller
 * puts the focus inside (autoFocus) and back where it was on close.
 */
export function InlineDialog({ label, onClose, children, className }: { label: string; onClose: () => void; children: ReactNode; className?: string }) {
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (event.key !== "Escape") return;
    event.preventDefault();
    event.stopPropagation();
    onClose();
  };
  return (
    <div role="dialog" aria-label={label} onKeyDown={onKeyDown} className={["rounded-lg bg-surface p-3 shadow ring-1", className].filter(Boolean).join(" ")}>
      {children}
    </div>
  );
}
