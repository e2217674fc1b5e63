/** The theme cookie: read by the server layout, written by the toggle (so no inline script is needed). */
export const THEME_COOKIE = "baton-theme";
export type Theme = "light" | "dark";
