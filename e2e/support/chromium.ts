/**
 * Debian's Chromium, as the end-to-end tests and the benchmarks launch it
 * (Playwright cannot download its own browsers here; docs/platform.md#browsers).
 */
export const CHROMIUM_PATH = process.env.BATON_CHROMIUM ?? "/usr/bin/chromium";
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-gpu",
  "--disable-quic",
];
