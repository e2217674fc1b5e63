import path from "node:path";

/**
 * Where the run's reports go. Another folder (with its own BATON_E2E_PORT and
 * BATON_DIST_DIR) lets two runs of the suite share a checkout.
 */
export const E2E_RESULTS = process.env.BATON_E2E_RESULTS ?? "test-results";

/** The suite's server: playwright.config.ts starts it there (e2e/support/serve.ts). */
export const E2E_PORT = Number(process.env.BATON_E2E_PORT ?? 3210);
export const E2E_BASE_URL = `http://127.0.0.1:${E2E_PORT}`;

/** Where the end-to-end server keeps its database and watched folder; wiped at each run. */
export const E2E_ROOT = path.resolve(E2E_RESULTS, "e2e-server");
/** A SQLite file there, or the PostgreSQL database `npm run test:postgresql` names (recreated at each run). */
export const E2E_DATABASE_URL = process.env.BATON_E2E_DATABASE_URL || `file:${path.join(E2E_ROOT, "baton.db")}`;
export const E2E_WATCH_DIR = path.join(E2E_ROOT, "watched");

/** The example packets, invalid bodies and workspace the specs read (testing/fixtures/examples, in the repository). */
export const EXAMPLES_DIR = path.resolve("testing", "fixtures", "examples");

/** Other producers' handoffs (Markdown, camelCase JSON, the v0 shape), as published (testing/fixtures/formats). */
export const FORMATS_DIR = path.resolve("testing", "fixtures", "formats");
