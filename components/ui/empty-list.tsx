import type { ReactNode, Ref } from "react";

/** A list's "nothing here" message: it takes the focus (tabIndex -1) when the last item goes. */
export function EmptyList({ children, ref }: { children: ReactNode; ref?: Ref<HTMLParagraphElement> }) {
  return (
    <p ref={ref} tabIndex={-1} className="rounded-lg bg-white p-6 text-center text-zinc-600 ring-1 ring-zinc-200 outline-none dark:bg-zinc-900 dark:text-zinc-400 dark:ring-zinc-800">
      {children}
    </p>
  );
}
