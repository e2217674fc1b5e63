import { defineConfig } from "@playwright/test";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "./e2e/support/chromium";

export const E2E_PORT = Number(process.env.BATON_E2E_PORT ?? 3210);

export default defineConfig({
  testDir: "e2e",
  fullyParallel: false,
  workers: 1,
  retries: 0,
  reporter: [["list"], ["json", { outputFile: "test-results/playwright.json" }]],
  // Kept apart from test-results/ itself, which Playwright would otherwise empty at start.
  outputDir: "test-results/playwright",
  timeout: 60_000,
  use: {
    baseURL: `http://127.0.0.1:${E2E_PORT}`,
    browserName: "chromium",
    launchOptions: { executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS },
    trace: "off",
  },
  // The first-run (empty board) spec needs the database before anything is posted: it runs first.
  projects: [
    { name: "empty-database", testMatch: /empty-board\.spec\.ts/ },
    { name: "app", testIgnore: /empty-board\.spec\.ts/, dependencies: ["empty-database"] },
  ],
  webServer: {
    command: "tsx e2e/support/serve.ts",
    url: `http://127.0.0.1:${E2E_PORT}/api/v1/health`,
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: "pipe",
    stderr: "pipe",
    env: { BATON_E2E_PORT: String(E2E_PORT) },
  },
});
