import { spawn } from "node:child_process";
import { createWriteStream, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { createPostgresqlDatabase, TEST_POSTGRESQL_URL } from "../testing/postgresql";
import { stepCpu } from "./step-cpu";

// `npm test`: Vitest beside the build, each on SQLite and (with BATON_TEST_POSTGRESQL_URL) PostgreSQL
// at once, then each database's Playwright pass after its Vitest pass; a log per step, printed whole
// so passes never interleave (docs/testing.md).

const LOGS = path.resolve("test-results", "logs");
const PG_RESULTS = "test-results/postgresql";
/** The SQLite pass's specs with servers of their own, when both passes run (playwright.config.ts BATON_E2E_PART). */
const OWN_SERVERS_RESULTS = "test-results/own-servers";

interface Step {
  name: string;
  command: string[];
  env?: Record<string, string>;
}

const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

function runStep(step: Step): Promise<number> {
  const started = Date.now();
  const log = path.join(LOGS, `${step.name.replace(/[^a-z0-9]+/gi, "-").toLowerCase()}.log`);
  const out = createWriteStream(log);
  // On two cores the run's length follows the sum of its steps' CPU: each step says its own.
  const cpu = stepCpu(step.name, step.command);
  const cpuNote = () => {
    const used = cpu.seconds();
    cpu.remove();
    return used === null ? "" : ` (${used.toFixed(1)} CPU-s)`;
  };
  return new Promise((resolve) => {
    const [command, ...args] = cpu.command;
    const child = spawn(command!, args, { env: { ...process.env, ...step.env }, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    const finish = (status: number) => {
      out.end(() => {
        process.stdout.write(`\n---- ${step.name}: ${status === 0 ? "passed" : `FAILED (exit ${status})`} in ${seconds(started)}${cpuNote()}; output follows (${path.relative(process.cwd(), log)})\n`);
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

// --sqlite or --postgresql runs that pass alone.
const only = process.argv.includes("--sqlite") ? "sqlite" : process.argv.includes("--postgresql") ? "postgresql" : null;
if (only === "postgresql" && !TEST_POSTGRESQL_URL) {
  console.error("npm run test:postgresql needs BATON_TEST_POSTGRESQL_URL (a role that may create databases).");
  process.exit(2);
}

mkdirSync(LOGS, { recursive: true });
const startedAt = Date.now();
const onSqlite = only !== "postgresql";
const onPostgresql = Boolean(TEST_POSTGRESQL_URL) && only !== "sqlite";
if (!onPostgresql && only !== "sqlite") {
  console.log(
    "PostgreSQL pass: SKIPPED: set BATON_TEST_POSTGRESQL_URL to a PostgreSQL role that may create databases, " +
      "e.g. postgresql://baton:baton@127.0.0.1:5432/postgres, to run the suite on PostgreSQL too (docs: Testing on PostgreSQL).",
  );
}
const postgresqlEnv = { BATON_TEST_DATABASE: "postgresql", BATON_RELIABILITY_DIR: path.resolve(PG_RESULTS, "reliability") };

let e2eDatabase: Awaited<ReturnType<typeof createPostgresqlDatabase>> | null = null;
const e2eStep = (name: string, env: Record<string, string>): Step => ({ name, command: ["npx", "playwright", "test"], env });

let failures = 0;
try {
  console.log(`\n==== unit tests and the build: ${[onSqlite && "Vitest on SQLite", onPostgresql && "Vitest on PostgreSQL", "build"].filter(Boolean).join(" | ")}`);
  const sqliteUnit = onSqlite ? runStep({ name: "Vitest on SQLite", command: ["npx", "vitest", "run"] }) : Promise.resolve(0);
  const postgresqlUnit = onPostgresql
    ? runStep({ name: "Vitest on PostgreSQL", command: ["npx", "vitest", "run", `--outputFile.json=${PG_RESULTS}/vitest.json`], env: postgresqlEnv })
    : Promise.resolve(0);
  const built = runStep({ name: "build", command: ["npx", "tsx", "scripts/build-if-stale.ts"] });
  // The PostgreSQL browser pass's database. Vitest is already running: a server that refuses it is
  // reported as a failed step when Vitest is done, not as a crash that leaves Vitest orphaned.
  const created = onPostgresql
    ? await createPostgresqlDatabase("baton_e2e").then(
        (database) => ({ database, error: null }),
        (error: unknown) => ({ database: null, error: error instanceof Error ? error.message : String(error) }),
      )
    : { database: null, error: null };
  e2eDatabase = created.database;
  const e2eDatabaseError = created.error;
  // Both passes: the browser's specs run in one of them (playwright.config.ts, decision 049).
  const both: Record<string, string> = onSqlite && e2eDatabase ? { BATON_E2E_BOTH_PASSES: "1" } : {};
  // An end-to-end pass starts once the build and the unit tests on its database are done: side by
  // side with Vitest every pass slows (decision 072), but the first unit pass to end leaves the
  // cores to the other's last files (docs/decisions/096-each-browser-pass-follows-its-unit-pass.md).
  // A failed unit pass does not stop its browser pass: every failure is reported in one run.
  const after = async (unitPasses: Promise<number>[], step: Step) => {
    await Promise.all(unitPasses);
    if (await built) {
      console.log(`\n==== ${step.name}: not run, the build failed`);
      return 0;
    }
    console.log(`\n==== ${step.name}: starts after ${seconds(startedAt)}`);
    return runStep(step);
  };
  const steps: Promise<number>[] = [sqliteUnit, postgresqlUnit, built];
  if (onSqlite) {
    steps.push(after([sqliteUnit], e2eStep("Playwright on SQLite", e2eDatabase ? { ...both, BATON_E2E_PART: "rest" } : {})));
    // The SQLite pass's specs that start servers of their own (and measure them under load) run in a
    // third process, once both unit passes are done.
    if (e2eDatabase) {
      const env = { BATON_E2E_PART: "servers", BATON_E2E_RESULTS: OWN_SERVERS_RESULTS, BATON_E2E_PORT: "3212" };
      steps.push(after([sqliteUnit, postgresqlUnit], e2eStep("Playwright on SQLite, own servers", env)));
    }
  }
  if (e2eDatabase) {
    const env = { ...postgresqlEnv, ...both, BATON_E2E_DATABASE_URL: e2eDatabase.url, BATON_E2E_RESULTS: PG_RESULTS, BATON_E2E_PORT: "3211" };
    steps.push(after([postgresqlUnit], e2eStep("Playwright on PostgreSQL", env)));
  }
  if (e2eDatabaseError !== null) {
    steps.push(
      postgresqlUnit.then(() => {
        console.log(`\n==== Playwright on PostgreSQL: FAILED, its database could not be created: ${e2eDatabaseError}`);
        return 1;
      }),
    );
  }
  const heartbeat = setInterval(() => console.log(`     still running after ${seconds(startedAt)}`), 60_000);
  failures = (await Promise.all(steps)).filter((status) => status !== 0).length;
  clearInterval(heartbeat);
} finally {
  await (e2eDatabase as Awaited<ReturnType<typeof createPostgresqlDatabase>> | null)?.drop();
}
console.log(`\nnpm test: ${failures ? `${failures} step(s) failed` : "every step passed"} in ${seconds(startedAt)}`);
process.exit(failures ? 1 : 0);
