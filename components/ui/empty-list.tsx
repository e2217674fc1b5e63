import type { ReactNode, Ref } from "react";

/** A list's "nothing here" message: it takes the focus (tabIndex -1) when the last item goes. */
export function EmptyList({ children, ref }: { children: ReactNode; ref?: Ref<HTMLParagraphElement> }) {
  return (
    <p ref={ref} tabIndex={-1} className="rounded-lg bg-surface p-6 text-center text-muted ring-1 ring-line outline-none">
      {children}
    </p>
  );
}
