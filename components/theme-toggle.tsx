"use client";

import { useState } from "react";

import { THEME_COOKIE, THEMES, type Theme } from "@/lib/browser/theme";

const LABELS: Record<Theme, string> = { system: "System theme", light: "Light theme", dark: "Dark theme" };

/**
 * System, light or dark; the choice is a cookie, so the server renders the right class with
 * no flash and no inline script. "System" has no class: globals.css follows prefers-color-scheme.
 */
export function ThemeToggle({ initial }: { initial: Theme }) {
  const [theme, setTheme] = useState<Theme>(initial);
  return (
    <select
      aria-label="Theme"
      value={theme}
      onChange={(event) => {
        const next = event.target.value as Theme;
        const root = document.documentElement.classList;
        root.toggle("dark", next === "dark");
        root.toggle("light", next === "light");
        document.cookie = next === "system" ? `${THEME_COOKIE}=; path=/; max-age=0; samesite=lax` : `${THEME_COOKIE}=${next}; path=/; max-age=31536000; samesite=lax`;
        setTheme(next);
      }}
      className="min-h-6 rounded-md bg-surface px-2 py-1 text-sm ring-1 ring-line-strong"
    >
      {THEMES.map((choice) => (
        <option key={choice} value={choice}>
          {LABELS[choice]}
        </option>
      ))}
    </select>
  );
}
