import type { ReactNode } from "react";

/** A short label on a coloured ground (a severity, a risk's state, "blocking"); `className` gives its colours. */
export function Badge({ children, className, large = false }: { children: ReactNode; className?: string; large?: boolean }) {
  return <span className={["rounded py-0.5", large ? "px-2 text-sm" : "px-1.5 text-xs", className].filter(Boolean).join(" ")}>{children}</span>;
}

/** A count in a pill, beside a heading; `className` gives its padding and size. */
export function CountPill({ children, label, className, testId }: { children: ReactNode; label?: string; className?: string; testId?: string }) {
  return (
    <span aria-label={label} data-testid={testId} className={["rounded-full bg-zinc-200 dark:bg-zinc-800", className].filter(Boolean).join(" ")}>
      {children}
    </span>
  );
}
