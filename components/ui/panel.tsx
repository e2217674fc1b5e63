import type { ReactNode } from "react";

export const PANEL_CLASS = "rounded-lg bg-surface p-4 shadow-sm ring-1 ring-line";
export const PANEL_HEADING_CLASS = "mb-2 text-sm font-semibold tracking-wide text-muted uppercase";

/** A titled card (a thread page section, an admin list or form); the heading names it for screen readers. */
export function Panel({ headingId, title, children, className }: { headingId: string; title: ReactNode; children: ReactNode; className?: string }) {
  return (
    <section aria-labelledby={headingId} className={[PANEL_CLASS, className].filter(Boolean).join(" ")}>
      <h2 id={headingId} className={PANEL_HEADING_CLASS}>
        {title}
      </h2>
      {children}
    </section>
  );
}
