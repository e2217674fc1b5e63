import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { configDefaults, defineConfig } from "vitest/config";

const ON_POSTGRESQL = process.env.BATON_TEST_DATABASE === "postgresql";
const INCLUDE = ["lib/**/*.test.ts", "cli/**/*.test.ts", "scripts/**/*.test.ts"];

/**
 * Tests of SQLite itself (a file locked by another process, PRAGMA integrity_check over
 * the file): they run in the first pass; the PostgreSQL pass (BATON_TEST_DATABASE=postgresql,
 * set by scripts/test.ts) leaves them out.
 */
const SQLITE_ONLY = ["lib/db-busy.test.ts", "lib/ledger/consistency.test.ts"];

/**
 * The PostgreSQL pass also leaves out files that never open a database: a file opens
 * one only through the test-database helpers (lib/testing/temp-database.ts,
 * lib/testing/postgresql.ts), so a file that names neither runs the same on both.
 */
const USES_DATABASE = /testing\/(temp-database|postgresql)"/;
function filesWithoutDatabase(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory() && entry.name !== "generated" && entry.name !== "node_modules") walk(full);
      else if (entry.isFile() && entry.name.endsWith(".test.ts") && !USES_DATABASE.test(readFileSync(full, "utf8"))) found.push(full);
    }
  };
  for (const root of ["lib", "cli", "scripts"]) walk(root);
  return found;
}

export default defineConfig({
  test: {
    include: INCLUDE,
    exclude: [...configDefaults.exclude, ...(ON_POSTGRESQL ? [...SQLITE_ONLY, ...filesWithoutDatabase()] : [])],
    pool: "forks",
    // Each file has its own database, so files run side by side; the SQLite and PostgreSQL
    // passes run at the same time too (scripts/test.ts), two workers each on a 2-core machine.
    maxWorkers: Number(process.env.BATON_TEST_WORKERS ?? 2),
    reporters: ["default", "json"],
    outputFile: { json: "test-results/vitest.json" },
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
  resolve: { alias: { "@": new URL("./", import.meta.url).pathname } },
});
