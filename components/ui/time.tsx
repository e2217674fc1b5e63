"use client";

import { useId, useState } from "react";
import { DISTINCT_TIMES_MS, formatRelative } from "@/lib/browser/age";
import { formatMoment } from "@/lib/browser/moment";

interface WhenProps {
  /** The moment shown: for a packet, when Baton received it. */
  iso: string;
  /**
   * When the shown data was made (ms): the relative text is measured from it, so the server and
   * the browser render the same words. Without it the exact moment is the text (a list whose
   * data carries no clock).
   */
  now?: number;
  /** The agent's own time for the same packet (created_at): told too when it is more than a minute away. */
  written?: string | null;
  /** For a roving list (the board): -1 keeps the moment out of the tab order while its row is not current. */
  tabIndex?: number;
  /** In a row that may be too narrow (a card's first line): the text ends in "…" instead of overflowing; the tooltip keeps both times whole. */
  shrinks?: boolean;
  className?: string;
}

/**
 * The one way a moment is shown (docs/decisions/062-one-time-format.md): "5 min ago", or
 * "written 2 h ago · received 5 min ago" when the agent's time and Baton's differ. The exact
 * UTC times are its description, shown as a tooltip on hover and on keyboard focus.
 */
export function When({ iso, now, written, tabIndex = 0, shrinks = false, className }: WhenProps) {
  const tipId = useId();
  // Esc hides the tip without moving focus or the pointer (WCAG 1.4.13); leaving shows it again next time.
  const [dismissed, setDismissed] = useState(false);
  const both = written && Math.abs(Date.parse(written) - Date.parse(iso)) > DISTINCT_TIMES_MS ? written : null;
  const say = (at: string) => (now === undefined ? formatMoment(at) : formatRelative(at, now));
  const text = both ? `written ${say(both)} · received ${say(iso)}` : say(iso);
  const exact = both ? `written ${formatMoment(both)}, received ${formatMoment(iso)}` : formatMoment(iso);
  return (
    <span className={`group/when relative inline-block ${shrinks ? "min-w-0" : ""} ${className ?? ""}`} onMouseLeave={() => setDismissed(false)}>
      <time
        dateTime={iso}
        tabIndex={tabIndex}
        aria-describedby={tipId}
        onBlur={() => setDismissed(false)}
        onKeyDown={(event) => {
          if (event.key === "Escape" && !dismissed) {
            event.stopPropagation();
            setDismissed(true);
          }
        }}
        className={`cursor-help rounded-sm underline decoration-dotted decoration-1 underline-offset-2 outline-none focus-visible:ring-2 focus-visible:ring-focus ${shrinks ? "block truncate" : ""}`}
      >
        {text}
      </time>
      {/* display:none until wanted, so a hidden tip never widens the page; still read as the description. */}
      <span
        id={tipId}
        role="tooltip"
        className={`absolute top-full left-0 z-30 mt-1 hidden w-max max-w-[min(20rem,calc(100vw-2rem))] rounded bg-zinc-900 px-2 py-1 font-sans text-xs font-normal whitespace-normal text-white normal-case shadow-lg dark:bg-zinc-100 dark:text-zinc-900 ${dismissed ? "" : "group-focus-within/when:block group-hover/when:block"}`}
      >
        {exact}
      </span>
    </span>
  );
}
