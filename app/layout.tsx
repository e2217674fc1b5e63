import type { Metadata } from "next";
import { cookies } from "next/headers";
import Link from "next/link";
import type { ReactNode } from "react";
import { SignOutButton } from "@/components/auth/sign-out-button";
import { MainNav } from "@/components/main-nav";
import { ThemeToggle } from "@/components/theme-toggle";
import { currentPagePerson } from "@/lib/auth/page-person";
import { abilitiesOf } from "@/lib/auth/roles";
import { THEME_COOKIE, themeOf } from "@/lib/browser/theme";
import { Providers } from "./providers";
import "./globals.css";

export const metadata: Metadata = {
  // Each page names itself ("Risks · Baton"); a thread page names the thread.
  title: { default: "Baton", template: "%s · Baton" },
  description: "Which of your agents needs you, and why.",
};

/** The main navigation; admin entries only for admins (the pages check the role themselves). */
const NAV: readonly { href: string; label: string; admin?: boolean }[] = [
  { href: "/", label: "Board" },
  { href: "/questions", label: "Questions" },
  { href: "/risks", label: "Risks" },
  { href: "/timeline", label: "Timeline" },
  { href: "/lessons", label: "Lessons" },
  { href: "/usage", label: "Usage" },
  { href: "/admin/users", label: "Users", admin: true },
  { href: "/admin/tokens", label: "Tokens", admin: true },
  { href: "/admin/webhooks", label: "Webhooks", admin: true },
  { href: "/admin/integrations", label: "Integrations", admin: true },
];

export default async function RootLayout({ children }: { children: ReactNode }) {
  const theme = themeOf((await cookies()).get(THEME_COOKIE)?.value);
  // Links are only a convenience: every page and endpoint checks the person again.
  const person = await currentPagePerson();
  const can = person ? abilitiesOf(person.role) : null;
  return (
    <html lang="en" className={theme === "system" ? undefined : theme}>
      <body className="flex h-screen flex-col bg-canvas text-fg antialiased">
        {/* Every page's <main> has id="main". */}
        <a href="#main" className="sr-only rounded-md bg-surface px-3 py-2 text-sm font-medium ring-2 ring-focus focus:not-sr-only focus:absolute focus:top-2 focus:left-2 focus:z-50">
          Skip to main content
        </a>
        <header className="flex flex-wrap items-center justify-between gap-2 border-b border-line px-4 py-2">
          <nav aria-label="Main" className="flex max-w-full items-center gap-4 overflow-x-auto whitespace-nowrap md:flex-wrap">
            <Link href="/" prefetch={false} className="text-lg font-bold">
              Baton
            </Link>
            {person ? <MainNav entries={NAV.filter((entry) => !entry.admin || can?.administer).map(({ href, label }) => ({ href, label }))} /> : null}
          </nav>
          <div className="flex items-center gap-3">
            {person ? (
              <>
                <span className="text-sm text-muted">
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
