import { spawnSync } from "node:child_process";
import path from "node:path";
import { createPostgresqlDatabase, TEST_POSTGRESQL_URL } from "../lib/testing/postgresql";

/**
 * `npm run test:postgresql`: the database tests (Vitest) and the end-to-end
 * suite (Playwright) again, on PostgreSQL. Needs BATON_TEST_POSTGRESQL_URL, a
 * role that may create databases; `.ci/run` starts a server and sets it.
 * Reports go to test-results/postgresql/, which scripts/test-summary.ts adds up.
 */

if (!TEST_POSTGRESQL_URL) {
  // `npm test` on a machine without PostgreSQL still passes on SQLite; CI sets the URL
  // (.ci/run), and then scripts/test-summary.ts counts this pass's reports as required.
  console.log(
    "test:postgresql: SKIPPED: set BATON_TEST_POSTGRESQL_URL to a PostgreSQL role that may create databases, " +
      "e.g. postgresql://baton:baton@127.0.0.1:5432/postgres, to run the suite on PostgreSQL too (README: Testing on PostgreSQL).",
  );
  process.exit(0);
}

const RESULTS = "test-results/postgresql";

function run(command: string, args: string[], env: Record<string, string> = {}): number {
  const result = spawnSync(command, args, { stdio: "inherit", env: { ...process.env, BATON_TEST_DATABASE: "postgresql", BATON_RELIABILITY_DIR: path.resolve(RESULTS, "reliability"), ...env } });
  return result.status ?? 1;
}

const unit = run("npx", ["vitest", "run", `--outputFile.json=${RESULTS}/vitest.json`]);
const e2eDatabase = await createPostgresqlDatabase("baton_e2e");
const built = run("npx", ["tsx", "scripts/build-if-stale.ts"]);
const e2e = built === 0 ? run("npx", ["playwright", "test"], { BATON_E2E_DATABASE_URL: e2eDatabase.url, BATON_E2E_RESULTS: RESULTS }) : built;
await e2eDatabase.drop();
process.exit(unit || e2e);
