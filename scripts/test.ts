import { spawn } from "node:child_process";
import { createWriteStream, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { createPostgresqlDatabase, TEST_POSTGRESQL_URL } from "../testing/postgresql";
import { stepCpu } from "./step-cpu";

// `npm test`: Vitest beside the build, then Playwright, each on SQLite and (with BATON_TEST_POSTGRESQL_URL)
// PostgreSQL at once; a log per step, printed whole so passes never interleave (docs/testing.md).

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

// The end-to-end passes start as soon as the build is done, while Vitest may still run.
let e2eDatabase: Awaited<ReturnType<typeof createPostgresqlDatabase>> | null = null;
const endToEnd = async (): Promise<Step[]> => {
  e2eDatabase = onPostgresql ? await createPostgresqlDatabase("baton_e2e") : null;
  // Both passes: the browser's specs run in one of them (playwright.config.ts, decision 049).
  const both: Record<string, string> = onSqlite && e2eDatabase ? { BATON_E2E_BOTH_PASSES: "1" } : {};
  // Both passes: the SQLite pass's specs that start servers of their own run in a third process beside it.
  const sqliteParts: Step[] = !onSqlite
    ? []
    : e2eDatabase
      ? [
          { name: "Playwright on SQLite", command: ["npx", "playwright", "test"], env: { ...both, BATON_E2E_PART: "rest" } },
          {
            name: "Playwright on SQLite, own servers",
            command: ["npx", "playwright", "test"],
            env: { BATON_E2E_PART: "servers", BATON_E2E_RESULTS: OWN_SERVERS_RESULTS, BATON_E2E_PORT: "3212" },
          },
        ]
      : [{ name: "Playwright on SQLite", command: ["npx", "playwright", "test"] }];
  return [
    ...sqliteParts,
    ...(e2eDatabase
      ? [
          {
            name: "Playwright on PostgreSQL",
            command: ["npx", "playwright", "test"],
            env: { ...postgresqlEnv, ...both, BATON_E2E_DATABASE_URL: e2eDatabase.url, BATON_E2E_RESULTS: PG_RESULTS, BATON_E2E_PORT: "3211" },
          },
        ]
      : []),
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
  await (e2eDatabase as Awaited<ReturnType<typeof createPostgresqlDatabase>> | null)?.drop();
}
console.log(`\nnpm test: ${failures ? `${failures} step(s) failed` : "every step passed"} in ${seconds(started)}`);
process.exit(failures ? 1 : 0);
