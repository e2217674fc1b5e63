"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";

export interface NavEntry {
  href: string;
  label: string;
}

/** The page's own entry is marked aria-current="page" (and drawn so); a thread page belongs to the board. */
export function MainNav({ entries }: { entries: readonly NavEntry[] }) {
  const pathname = usePathname();
  const current = (href: string) => (href === "/" ? pathname === "/" || pathname.startsWith("/threads/") : pathname === href || pathname.startsWith(`${href}/`));
  return entries.map((entry) => {
    const here = current(entry.href);
    return (
      <Link
        key={entry.href}
        href={entry.href}
        // Every page here is rendered per request: a prefetch is a render nobody may look at (decision 047).
        prefetch={false}
        aria-current={here ? "page" : undefined}
        className={`inline-flex min-h-6 items-center rounded-sm border-b-2 text-sm hover:underline ${here ? "border-focus font-semibold text-fg" : "border-transparent text-muted"}`}
      >
        {entry.label}
      </Link>
    );
  });
}
