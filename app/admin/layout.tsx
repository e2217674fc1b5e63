import type { ReactNode } from "react";

/** The admin pages' frame: each page gives its heading and its panels. */
export default function AdminLayout({ children }: { children: ReactNode }) {
  return (
    <main id="main" className="flex min-h-0 flex-1 flex-col gap-4 overflow-auto p-4">
      {children}
    </main>
  );
}
