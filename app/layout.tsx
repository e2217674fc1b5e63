import type { Metadata } from "next";
import { cookies } from "next/headers";
import Link from "next/link";
import type { ReactNode } from "react";
import { ThemeToggle } from "@/components/theme-toggle";
import { THEME_COOKIE } from "@/lib/theme";
import { Providers } from "./providers";
import "./globals.css";

export const metadata: Metadata = {
  title: "Baton",
  description: "Which of your agents needs you, and why.",
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  const theme = (await cookies()).get(THEME_COOKIE)?.value === "dark" ? "dark" : "light";
  return (
    <html lang="en" className={theme === "dark" ? "dark" : undefined}>
      <body className="flex h-screen flex-col bg-zinc-50 text-zinc-900 antialiased dark:bg-zinc-950 dark:text-zinc-100">
        <header className="flex items-center justify-between border-b border-zinc-200 px-4 py-2 dark:border-zinc-800">
          <nav aria-label="Main" className="flex items-center gap-4">
            <Link href="/" className="text-lg font-bold">
              Baton
            </Link>
          </nav>
          <ThemeToggle initial={theme} />
        </header>
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}
