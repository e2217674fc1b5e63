import { configDefaults, defineConfig } from "vitest/config";

/**
 * Tests of SQLite itself (a file locked by another process, PRAGMA integrity_check over
 * the file): they run in the first pass; the PostgreSQL pass (BATON_TEST_DATABASE=postgresql,
 * set by scripts/test-postgresql.ts) leaves them out.
 */
const SQLITE_ONLY = ["lib/db-busy.test.ts", "lib/ledger/consistency.test.ts"];

export default defineConfig({
  test: {
    include: ["lib/**/*.test.ts", "cli/**/*.test.ts", "scripts/**/*.test.ts"],
    exclude: [...configDefaults.exclude, ...(process.env.BATON_TEST_DATABASE === "postgresql" ? SQLITE_ONLY : [])],
    pool: "forks",
    reporters: ["default", "json"],
    outputFile: { json: "test-results/vitest.json" },
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
  resolve: { alias: { "@": new URL("./", import.meta.url).pathname } },
});
