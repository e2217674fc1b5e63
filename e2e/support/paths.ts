import path from "node:path";

/** Where the end-to-end server keeps its database and watched folder; wiped at each run. */
export const E2E_ROOT = path.resolve("test-results", "e2e-server");
export const E2E_DATABASE_URL = `file:${path.join(E2E_ROOT, "baton.db")}`;
export const E2E_WATCH_DIR = path.join(E2E_ROOT, "watched");

/** The shared example packets every developer has beside the project (../shared/README.md). */
export const EXAMPLES_DIR = path.resolve("..", "shared", "examples");
