// Specs import lib/ server modules: first, let `server-only` resolve as on the server.
import "./bin/server-only.js";
import { readdirSync } from "node:fs";
import path from "node:path";
import { defineConfig } from "@playwright/test";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "./e2e/support/chromium";
import { ADMIN_STATE } from "./e2e/support/people";
import { E2E_BASE_URL, E2E_PORT, E2E_RESULTS } from "./e2e/support/paths";


/**
 * The PostgreSQL pass (npm run test:postgresql) runs every spec against the suite's server
 * on PostgreSQL, except those that start SQLite servers of their own to test the server
 * process itself (a locked SQLite file, SIGKILL, overload, memory) or seed a fleet of their
 * own (glance): run once, in the first pass. instances.spec.ts starts two instances on one PostgreSQL database: that pass only.
 *
 * When `npm test` runs both passes side by side (BATON_E2E_BOTH_PASSES=1, set by
 * scripts/test.ts), every spec runs in one of them: their database work is the same API
 * calls on either database, and the Vitest PostgreSQL pass tests it function by function.
 * ON_POSTGRESQL_WHEN_BOTH are the PostgreSQL pass's (the stricter database for hostile text:
 * it refuses U+0000), chosen so that both passes last about as long
 * (docs/decisions/049-browser-specs-run-once.md). A pass run alone runs every spec it can.
 */
const ON_POSTGRESQL = /^postgres(ql)?:\/\//.test(process.env.BATON_E2E_DATABASE_URL ?? "");
const BOTH_PASSES = process.env.BATON_E2E_BOTH_PASSES === "1";
/** These two are projects of their own (below), run before the app's specs. */
const OWN_PROJECTS = ["first-run", "empty-board"];
const SQLITE_SERVERS = ["busy-database", "crash-safety", "overload", "memory", "glance"];
const ON_POSTGRESQL_WHEN_BOTH = ["a11y", "hostile-content", "arrival-order", "instances", "wait", "stream", "loop"];
const specName = (file: string) => path.basename(file).replace(/\.spec\.ts$/, "");
const appSpecs = readdirSync("e2e").filter((file) => file.endsWith(".spec.ts")).map(specName);
/**
 * BATON_E2E_PART splits the SQLite pass in two processes that run side by side (scripts/test.ts,
 * when both passes run): `servers` runs only the specs that start servers of their own (their
 * time goes mostly to starting, killing and waiting for servers), `rest` the others.
 */
const PART = process.env.BATON_E2E_PART;
const SERVERS_OF_THEIR_OWN = PART === "servers" && !ON_POSTGRESQL;
const ignored = ON_POSTGRESQL
  ? [...OWN_PROJECTS, ...SQLITE_SERVERS, ...(BOTH_PASSES ? appSpecs.filter((spec) => !ON_POSTGRESQL_WHEN_BOTH.includes(spec)) : [])]
  : PART === "servers"
    ? [...OWN_PROJECTS, ...appSpecs.filter((spec) => !SQLITE_SERVERS.includes(spec))]
    : [...OWN_PROJECTS, "instances", ...(BOTH_PASSES ? ON_POSTGRESQL_WHEN_BOTH : []), ...(PART === "rest" ? SQLITE_SERVERS : [])];
const APP_IGNORE = new RegExp(`(^|/)(${ignored.join("|")})\\.spec\\.ts$`);

export default defineConfig({
  testDir: "e2e",
  fullyParallel: false,
  workers: 1,
  // On CI, a failed test runs once more; the summary (scripts/test-summary.ts) names every
  // test that needed it, so a flaky one is seen and fixed, not hidden (decision 049).
  retries: process.env.CI ? 1 : 0,
  reporter: [["list"], ["json", { outputFile: `${E2E_RESULTS}/playwright.json` }]],
  // Kept apart from test-results/ itself, which Playwright would otherwise empty at start.
  outputDir: `${E2E_RESULTS}/playwright`,
  timeout: 60_000,
  use: {
    baseURL: E2E_BASE_URL,
    browserName: "chromium",
    launchOptions: { executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS },
    trace: "off",
  },
  // A fresh install first: the first-run spec creates the admin (whose session every later
  // spec's browser starts with), then the empty board, before anything is posted. The
  // specs with servers of their own need neither, nor the suite's server.
  projects: SERVERS_OF_THEIR_OWN
    ? [{ name: "app", testIgnore: APP_IGNORE }]
    : [
        { name: "first-run", testMatch: /first-run\.spec\.ts/ },
        { name: "empty-database", testMatch: /empty-board\.spec\.ts/, dependencies: ["first-run"], use: { storageState: ADMIN_STATE } },
        {
          name: "app",
          testIgnore: APP_IGNORE,
          dependencies: ["empty-database"],
          use: { storageState: ADMIN_STATE },
        },
      ],
  webServer: SERVERS_OF_THEIR_OWN
    ? undefined
    : {
        command: "tsx --conditions=react-server e2e/support/serve.ts",
        url: `${E2E_BASE_URL}/api/v1/health`,
        reuseExistingServer: false,
        timeout: 120_000,
        stdout: "pipe",
        stderr: "pipe",
        env: { BATON_E2E_PORT: String(E2E_PORT) },
      },
});
