import type { Metadata } from "next";
import { cookies } from "next/headers";
import Link from "next/link";
import type { ReactNode } from "react";
import { SignOutButton } from "@/components/auth/sign-out-button";
import { ThemeToggle } from "@/components/theme-toggle";
import { currentPagePerson } from "@/lib/auth/page-person";
import { abilitiesOf } from "@/lib/auth/roles";
import { THEME_COOKIE } from "@/lib/browser/theme";
import { Providers } from "./providers";
import "./globals.css";

export const metadata: Metadata = {
  title: "Baton",
  description: "Which of your agents needs you, and why.",
};

const navLinkClass = "rounded-sm text-sm text-zinc-700 hover:underline focus-visible:outline-2 focus-visible:outline-sky-600 dark:text-zinc-300";

/** The main navigation; admin entries only for admins (the pages check the role themselves). */
const NAV: readonly { href: string; label: string; admin?: boolean }[] = [
  { href: "/", label: "Board" },
  { href: "/questions", label: "Questions" },
  { href: "/risks", label: "Risks" },
  { href: "/timeline", label: "Timeline" },
  { href: "/lessons", label: "Lessons" },
  { href: "/admin/users", label: "Users", admin: true },
  { href: "/admin/tokens", label: "Tokens", admin: true },
  { href: "/admin/webhooks", label: "Webhooks", admin: true },
];

export default async function RootLayout({ children }: { children: ReactNode }) {
  const theme = (await cookies()).get(THEME_COOKIE)?.value === "dark" ? "dark" : "light";
  // Links are only a convenience: every page and endpoint checks the person again.
  const person = await currentPagePerson();
  const can = person ? abilitiesOf(person.role) : null;
  return (
    <html lang="en" className={theme === "dark" ? "dark" : undefined}>
      <body className="flex h-screen flex-col bg-zinc-50 text-zinc-900 antialiased dark:bg-zinc-950 dark:text-zinc-100">
        <header className="flex flex-wrap items-center justify-between gap-2 border-b border-zinc-200 px-4 py-2 dark:border-zinc-800">
          <nav aria-label="Main" className="flex flex-wrap items-center gap-4">
            <Link href="/" className="text-lg font-bold">
              Baton
            </Link>
            {person
              ? NAV.filter((entry) => !entry.admin || can?.administer).map((entry) => (
                  <Link key={entry.href} href={entry.href} className={navLinkClass}>
                    {entry.label}
                  </Link>
                ))
              : null}
          </nav>
          <div className="flex items-center gap-3">
            {person ? (
              <>
                <span className="text-sm text-zinc-600 dark:text-zinc-400">
                  {person.username} ({person.role})
                </span>
                <SignOutButton />
              </>
            ) : null}
            <ThemeToggle initial={theme} />
          </div>
        </header>
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}
