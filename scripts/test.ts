import { spawn } from "node:child_process";
import { createWriteStream, mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { createPostgresqlDatabase, TEST_POSTGRESQL_URL } from "../testing/postgresql";
import {
  OWN_SERVERS_RESULTS,
  POSTGRESQL_RESULTS as PG_RESULTS,
  POSTGRESQL_SECOND_HALF_RESULTS,
  SQLITE_SECOND_HALF_RESULTS,
} from "./test-reports";

// `npm test`: Vitest beside the build, then Playwright, each on SQLite and (with BATON_TEST_POSTGRESQL_URL)
// PostgreSQL at once; a log per step, printed whole so passes never interleave (docs/testing.md).

const LOGS = path.resolve("test-results", "logs");

interface Step {
  name: string;
  command: string[];
  env?: Record<string, string>;
}

const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

/**
 * Each step runs under a shell whose `times` gives the CPU its processes used (user + system,
 * every descendant that was waited for: servers and browsers too, not a PostgreSQL server's
 * backends). On two cores the run's length is about the sum of these over two.
 */
const CPU_WRAPPER = '"$@"; code=$?; times > "$BATON_STEP_TIMES"; exit $code';
function cpuSeconds(file: string): string {
  try {
    const children = readFileSync(file, "utf8").trim().split("\n")[1] ?? "";
    const total = [...children.matchAll(/(\d+)m([\d.]+)s/g)].reduce((sum, [, m, s]) => sum + Number(m) * 60 + Number(s), 0);
    return `${total.toFixed(1)} CPU-s`;
  } catch {
    return "CPU unknown";
  } finally {
    rmSync(file, { force: true });
  }
}

function runStep(step: Step): Promise<number> {
  const started = Date.now();
  const log = path.join(LOGS, `${step.name.replace(/[^a-z0-9]+/gi, "-").toLowerCase()}.log`);
  const times = `${log}.times`;
  const out = createWriteStream(log);
  return new Promise((resolve) => {
    const child = spawn("bash", ["-c", CPU_WRAPPER, "step", ...step.command], {
      env: { ...process.env, ...step.env, BATON_STEP_TIMES: times },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    const finish = (status: number) => {
      out.end(() => {
        process.stdout.write(`\n---- ${step.name}: ${status === 0 ? "passed" : `FAILED (exit ${status})`} in ${seconds(started)} (${cpuSeconds(times)}); output follows (${path.relative(process.cwd(), log)})\n`);
        process.stdout.write(readFileSync(log, "utf8"));
        process.stdout.write(`---- end of ${step.name}\n`);
        resolve(status);
      });
    };
    child.on("error", (error) => {
      out.write(`could not start: ${error.message}\n`);
      finish(127);
    });
    child.on("close", (code, signal) => finish(code ?? (signal ? 128 : 1)));
  });
}

async function phase(name: string, steps: Step[]): Promise<number> {
  const started = Date.now();
  console.log(`\n==== ${name}: ${steps.map((step) => step.name).join(" | ")}`);
  const heartbeat = setInterval(() => console.log(`     ${name}: still running after ${seconds(started)}`), 60_000);
  const statuses = await Promise.all(steps.map(runStep));
  clearInterval(heartbeat);
  const failed = steps.filter((_, index) => statuses[index] !== 0).map((step) => step.name);
  console.log(`==== ${name}: ${failed.length ? `FAILED (${failed.join(", ")})` : "passed"} in ${seconds(started)}`);
  return failed.length;
}

// --sqlite or --postgresql runs that pass alone.
const only = process.argv.includes("--sqlite") ? "sqlite" : process.argv.includes("--postgresql") ? "postgresql" : null;
if (only === "postgresql" && !TEST_POSTGRESQL_URL) {
  console.error("npm run test:postgresql needs BATON_TEST_POSTGRESQL_URL (a role that may create databases).");
  process.exit(2);
}

mkdirSync(LOGS, { recursive: true });
const started = Date.now();
const onSqlite = only !== "postgresql";
const onPostgresql = Boolean(TEST_POSTGRESQL_URL) && only !== "sqlite";
if (!onPostgresql && only !== "sqlite") {
  console.log(
    "PostgreSQL pass: SKIPPED: set BATON_TEST_POSTGRESQL_URL to a PostgreSQL role that may create databases, " +
      "e.g. postgresql://baton:baton@127.0.0.1:5432/postgres, to run the suite on PostgreSQL too (docs: Testing on PostgreSQL).",
  );
}
const postgresqlEnv = { BATON_TEST_DATABASE: "postgresql", BATON_RELIABILITY_DIR: path.resolve(PG_RESULTS, "reliability") };

type TestDatabase = Awaited<ReturnType<typeof createPostgresqlDatabase>>;
// The end-to-end passes start once the build and the unit tests are done.
const e2eDatabases: TestDatabase[] = [];
const endToEnd = async (): Promise<Step[]> => {
  const playwright = ["npx", "playwright", "test"];
  if (!onPostgresql) return onSqlite ? [{ name: "Playwright on SQLite", command: playwright }] : [];
  // One database per process: each half of the PostgreSQL pass has a server of its own.
  e2eDatabases.push(await createPostgresqlDatabase("baton_e2e"), await createPostgresqlDatabase("baton_e2e_second_half"));
  const [first, second] = e2eDatabases as [TestDatabase, TestDatabase];
  const onPg = (database: TestDatabase) => ({ ...postgresqlEnv, BATON_E2E_DATABASE_URL: database.url });
  const postgresqlSteps: Step[] = [
    { name: "Playwright on PostgreSQL, first half", command: playwright, env: { ...onPg(first), BATON_E2E_HALF: "1", BATON_E2E_RESULTS: PG_RESULTS, BATON_E2E_PORT: "3211" } },
    {
      name: "Playwright on PostgreSQL, second half",
      command: playwright,
      env: { ...onPg(second), BATON_E2E_HALF: "2", BATON_E2E_RESULTS: POSTGRESQL_SECOND_HALF_RESULTS, BATON_E2E_PORT: "3214" },
    },
  ];
  if (!onSqlite) return postgresqlSteps;
  // Both passes: each spec runs in one of them (playwright.config.ts, decision 049); the SQLite pass's specs
  // that start servers of their own run in a process beside them, and each pass's other specs in two halves
  // with a server each (decision 090): five processes that mostly wait.
  const both = { BATON_E2E_BOTH_PASSES: "1" };
  return [
    { name: "Playwright on SQLite, first half", command: playwright, env: { ...both, BATON_E2E_PART: "rest", BATON_E2E_HALF: "1" } },
    {
      name: "Playwright on SQLite, second half",
      command: playwright,
      env: { ...both, BATON_E2E_PART: "rest", BATON_E2E_HALF: "2", BATON_E2E_RESULTS: SQLITE_SECOND_HALF_RESULTS, BATON_E2E_PORT: "3213" },
    },
    {
      name: "Playwright on SQLite, own servers",
      command: playwright,
      env: { BATON_E2E_PART: "servers", BATON_E2E_RESULTS: OWN_SERVERS_RESULTS, BATON_E2E_PORT: "3212" },
    },
    ...postgresqlSteps.map((step) => ({ ...step, env: { ...step.env, ...both } })),
  ];
};

let failures = 0;
try {
  const unitTests = phase("unit tests", [
    ...(onSqlite ? [{ name: "Vitest on SQLite", command: ["npx", "vitest", "run"] }] : []),
    ...(onPostgresql ? [{ name: "Vitest on PostgreSQL", command: ["npx", "vitest", "run", `--outputFile.json=${PG_RESULTS}/vitest.json`], env: postgresqlEnv }] : []),
  ]);
  const [unit, e2e] = await Promise.all([
    unitTests,
    (async () => {
      const built = await phase("build", [{ name: "build", command: ["npx", "tsx", "scripts/build-if-stale.ts"] }]);
      if (built) return built;
      // The end-to-end passes wait for the unit tests: side by side on two cores, every pass took
      // three to four times as long as alone (Vitest on SQLite 388 s against 100 s), and the sum was
      // longer than one phase after the other (docs/decisions/072-unit-tests-then-browsers.md).
      await unitTests;
      return phase("end-to-end tests", await endToEnd());
    })(),
  ]);
  failures = unit + e2e;
} finally {
  await Promise.all(e2eDatabases.map((database) => database.drop()));
}
console.log(`\nnpm test: ${failures ? `${failures} step(s) failed` : "every step passed"} in ${seconds(started)}`);
process.exit(failures ? 1 : 0);
