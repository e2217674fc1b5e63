import type { ReactNode } from "react";

/** A titled block of the thread page; the heading names it for screen readers. */
export function Section({ id, title, children }: { id: string; title: string; children: ReactNode }) {
  return (
    <section aria-labelledby={id} className="rounded-lg bg-white p-4 shadow-sm ring-1 ring-zinc-200 dark:bg-zinc-900 dark:ring-zinc-800">
      <h2 id={id} className="mb-2 text-sm font-semibold tracking-wide text-zinc-600 uppercase dark:text-zinc-400">
        {title}
      </h2>
      {children}
    </section>
  );
}
