import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { configDefaults, defineConfig } from "vitest/config";

const ON_POSTGRESQL = process.env.BATON_TEST_DATABASE === "postgresql";
const INCLUDE = ["lib/**/*.test.ts", "cli/**/*.test.ts", "scripts/**/*.test.ts", "testing/**/*.test.ts"];

/**
 * Tests of SQLite itself (a file locked by another process, PRAGMA integrity_check over
 * the file): they run in the first pass; the PostgreSQL pass (BATON_TEST_DATABASE=postgresql,
 * set by scripts/test.ts) leaves them out.
 */
const SQLITE_ONLY = ["lib/db/busy.test.ts", "lib/events/consistency.test.ts"];

/**
 * The PostgreSQL pass also leaves out files that never open a database: a file opens
 * one only through the test-database helpers (testing/temp-database.ts,
 * testing/postgresql.ts, imported as `@/testing/…`), so a file that names neither runs the same on both.
 */
const USES_DATABASE = /testing\/(temp-database|postgresql)"/;

/**
 * Files that replace modules or globals (vi.mock and its kin) get a fresh module graph
 * each; every other file shares its worker's modules with the files before it, which
 * saves importing Prisma, Next's pieces and zod schemas again per file (most of the
 * suite's time). Each file still gets its own database.
 */
const REPLACES_MODULES = /\bvi\.(mock|doMock|unmock|stubGlobal|stubEnv|resetModules)\(/;
/** A file that changes process-wide state it cannot put back (a database lock, the config) asks for the same. */
const ASKS_FOR_ISOLATION = /^\/\/ vitest: isolated\b/m;

function testFiles(): { path: string; text: string }[] {
  const found: { path: string; text: string }[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory() && entry.name !== "generated" && entry.name !== "node_modules") walk(full);
      else if (entry.isFile() && entry.name.endsWith(".test.ts")) found.push({ path: full, text: readFileSync(full, "utf8") });
    }
  };
  for (const root of ["lib", "cli", "scripts", "testing"]) walk(root);
  return found;
}

const files = testFiles();
const isolated = files.filter((file) => REPLACES_MODULES.test(file.text) || ASKS_FOR_ISOLATION.test(file.text)).map((file) => file.path);
const left = [
  ...configDefaults.exclude,
  ...(ON_POSTGRESQL ? [...SQLITE_ONLY, ...files.filter((file) => !USES_DATABASE.test(file.text)).map((file) => file.path)] : []),
];

export default defineConfig({
  test: {
    projects: [
      { extends: true, test: { name: "isolated", include: isolated, exclude: left, isolate: true } },
      { extends: true, test: { name: "shared", include: INCLUDE, exclude: [...left, ...isolated], isolate: false } },
    ],
    pool: "forks",
    // Each file has its own database, so files run side by side; the SQLite and PostgreSQL
    // passes run at the same time too (scripts/test.ts), two workers each on a 2-core machine.
    maxWorkers: Number(process.env.BATON_TEST_WORKERS ?? 2),
    reporters: ["default", "json"],
    outputFile: { json: "test-results/vitest.json" },
    testTimeout: 30_000,
    // On CI a failed test runs once more; the summary (scripts/test-summary.ts) names every test
    // that needed it, so a flaky one is seen and fixed, not hidden (decision 049).
    retry: process.env.CI ? 1 : 0,
    // expect.poll waits up to 10 s (not 1 s): the passes run side by side on two cores.
    expect: { poll: { timeout: 10_000 } },
    hookTimeout: 60_000,
  },
  resolve: {
    alias: {
      "@": new URL("./", import.meta.url).pathname,
      // Tests are server code: `server-only` resolves as in Next's server layer, to its
      // empty module (docs/decisions/039-server-only-modules.md).
      "server-only": new URL("./node_modules/server-only/empty.js", import.meta.url).pathname,
    },
  },
});
