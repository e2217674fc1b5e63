import { existsSync } from "node:fs";

/**
 * Debian's Chromium, as the end-to-end tests and the benchmarks launch it
 * (Playwright cannot download its own browsers here; docs/platform.md#browsers).
 */
// Debian's old headless shell (package chromium-headless-shell) when installed: the same
// engine without the browser's UI layers, about a fifth less time per spec here.
const HEADLESS_SHELL = "/usr/lib/chromium/chromium-headless-shell";
export const CHROMIUM_PATH = process.env.BATON_CHROMIUM ?? (existsSync(HEADLESS_SHELL) ? HEADLESS_SHELL : "/usr/bin/chromium");
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-gpu",
  "--disable-quic",
];
