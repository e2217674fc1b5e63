"use client";

import { useState } from "react";

import { THEME_COOKIE, type Theme } from "@/lib/browser/theme";

/** Light or dark; the choice is a cookie, so the server renders the right theme with no flash and no inline script. */
export function ThemeToggle({ initial }: { initial: Theme }) {
  const [theme, setTheme] = useState<Theme>(initial);
  const next: Theme = theme === "dark" ? "light" : "dark";
  return (
    <button
      type="button"
      onClick={() => {
        document.documentElement.classList.toggle("dark", next === "dark");
        document.cookie = `${THEME_COOKIE}=${next}; path=/; max-age=31536000; samesite=lax`;
        setTheme(next);
      }}
      className="rounded-md px-2 py-1 text-sm ring-1 ring-zinc-300 hover:bg-zinc-100 focus-visible:outline-2 focus-visible:outline-sky-600 dark:ring-zinc-700 dark:hover:bg-zinc-800"
      aria-label={`Switch to the ${next} theme`}
    >
      {theme === "dark" ? "Light theme" : "Dark theme"}
    </button>
  );
}
