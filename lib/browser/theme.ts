/** The theme cookie: read by the server layout, written by the toggle (so no inline script is needed). */
export const THEME_COOKIE = "baton-theme";
/** "system" follows prefers-color-scheme (no cookie, no class); light and dark are the person's choice. */
export type Theme = "system" | "light" | "dark";
export const THEMES: readonly Theme[] = ["system", "light", "dark"];

/** The theme a cookie value names; anything else (or nothing) follows the system. */
export function themeOf(cookie: string | undefined): Theme {
  return cookie === "light" || cookie === "dark" ? cookie : "system";
}
