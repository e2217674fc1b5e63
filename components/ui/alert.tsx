import type { ReactNode } from "react";
import type { Problem } from "@/lib/browser/problem";

const TONES = {
  error: "bg-red-50 text-red-800 ring-red-200 dark:bg-red-950 dark:text-red-200 dark:ring-red-900",
  warning: "bg-amber-50 text-amber-900 ring-amber-200 dark:bg-amber-950 dark:text-amber-100 dark:ring-amber-900",
} as const;
/** Regular in a page or form; compact beside a small control (a card's buttons, an answer box). */
const SIZES = { regular: "px-3 py-2 text-sm", compact: "p-2 text-xs" } as const;

/** Something went wrong: role="alert", so a screen reader announces it as soon as it appears. */
export function Alert({
  children,
  tone = "error",
  size = "regular",
  id,
  className,
}: {
  children: ReactNode;
  tone?: keyof typeof TONES;
  size?: keyof typeof SIZES;
  id?: string;
  className?: string;
}) {
  return (
    <div id={id} role="alert" className={["rounded-md ring-1", TONES[tone], SIZES[size], className].filter(Boolean).join(" ")}>
      {children}
    </div>
  );
}

/** A form's error box: the problem's heading and lines, text only; re-created per failure so it is announced again. */
export function FormAlert({ problem, id }: { problem: Problem | null; id?: string }) {
  if (!problem) return null;
  return (
    <Alert key={problem.id} id={id}>
      {problem.heading ? <p className="font-medium">{problem.heading}</p> : null}
      {problem.lines.length === 1 ? (
        <p>{problem.lines[0]}</p>
      ) : (
        <ul className="list-disc pl-5">
          {problem.lines.map((line, index) => (
            <li key={index}>{line}</li>
          ))}
        </ul>
      )}
    </Alert>
  );
}

/** Something done, said politely (role="status"). Renders nothing without a message. */
export function Done({ children, className }: { children: ReactNode; className?: string }) {
  if (!children) return null;
  return (
    <p role="status" className={["text-sm text-success", className].filter(Boolean).join(" ")}>
      {children}
    </p>
  );
}

/** A plain note on a grey ground: what the person may not do here, why a list is empty. */
export function Note({ children, className }: { children: ReactNode; className?: string }) {
  return <p className={["rounded-md bg-zinc-100 p-2 text-sm text-zinc-700 dark:bg-zinc-900 dark:text-zinc-300", className].filter(Boolean).join(" ")}>{children}</p>;
}
