import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

/**
 * Prints one closing line, "N passed, N failed[, N skipped]", from the JSON
 * reports of Vitest and Playwright (test-results/*.json), so CI reads one figure.
 * Above it, each failed test by name with the first lines of its error: the end of a
 * CI log is what survives, and a count alone does not say what to fix.
 */
interface Counts {
  passed: number;
  failed: number;
  skipped: number;
  failures: string[];
  /** Playwright tests that failed once and passed on their retry (counted as passed). */
  flaky?: number;
}

/** The first lines of an error, without terminal colours: enough to name the cause. */
const firstLines = (message: string | undefined) =>
  (message ?? "(no message)")
    .replace(/\u001b\[[0-9;]*m/g, "")
    .split("\n")
    .filter((line) => line.trim())
    .slice(0, 6)
    .map((line) => `      ${line.slice(0, 300)}`)
    .join("\n");

function vitestCounts(file: string): Counts {
  const report = JSON.parse(readFileSync(file, "utf8")) as {
    numPassedTests: number;
    numFailedTests: number;
    numPendingTests: number;
    numTodoTests: number;
    testResults: { name: string; status: string; message?: string; assertionResults: { status: string; fullName: string; failureMessages?: string[] }[] }[];
  };
  const failures: string[] = [];
  let failedFiles = 0;
  let flaky = 0;
  for (const result of report.testResults) {
    const name = path.relative(process.cwd(), result.name);
    const failedTests = result.assertionResults.filter((test) => test.status === "failed");
    for (const test of failedTests) failures.push(`  ✘ ${name} › ${test.fullName}\n${firstLines(test.failureMessages?.[0])}`);
    // A test that passed keeps the errors of the attempts before (CI retries once).
    for (const test of result.assertionResults.filter((test) => test.status === "passed" && test.failureMessages?.length)) {
      flaky += 1;
      failures.push(`  flaky (passed on retry) ${name} › ${test.fullName}\n${firstLines(test.failureMessages![0])}`);
    }
    // A file that failed outside its tests (its setup or teardown threw) counts as one failure.
    if (result.status === "failed" && failedTests.length === 0) {
      failedFiles += 1;
      failures.push(`  ✘ ${name} (the file itself)\n${firstLines(result.message)}`);
    }
  }
  return { passed: report.numPassedTests, failed: report.numFailedTests + failedFiles, skipped: report.numPendingTests + report.numTodoTests, failures, flaky };
}

interface PlaywrightSuite {
  title: string;
  suites?: PlaywrightSuite[];
  specs?: { title: string; file: string; line: number; tests: { status: string; results: { status: string; error?: { message?: string } }[] }[] }[];
}

function playwrightFailures(suite: PlaywrightSuite, titles: string[], into: string[]) {
  const path = suite.title && !suite.title.endsWith(".ts") ? [...titles, suite.title] : titles;
  for (const spec of suite.specs ?? []) {
    for (const test of spec.tests) {
      if (test.status !== "unexpected" && test.status !== "flaky") continue;
      const failed = test.results.find((result) => result.status !== "passed" && result.status !== "skipped");
      const label = test.status === "flaky" ? "flaky (passed on retry)" : "✘";
      into.push(`  ${label} e2e/${spec.file}:${spec.line} › ${[...path, spec.title].join(" › ")}\n${firstLines(failed?.error?.message)}`);
    }
  }
  for (const child of suite.suites ?? []) playwrightFailures(child, path, into);
}

function playwrightCounts(file: string): Counts {
  const report = JSON.parse(readFileSync(file, "utf8")) as {
    stats: { expected: number; unexpected: number; flaky: number; skipped: number };
    suites: PlaywrightSuite[];
  };
  const { expected, unexpected, flaky, skipped } = report.stats;
  const failures: string[] = [];
  for (const suite of report.suites) playwrightFailures(suite, [], failures);
  return { passed: expected + flaky, failed: unexpected, skipped, failures, flaky };
}

const total: Counts = { passed: 0, failed: 0, skipped: 0, failures: [] };
const reports: [string, (file: string) => Counts][] = [
  ["test-results/vitest.json", vitestCounts],
  ["test-results/playwright.json", playwrightCounts],
];
// The PostgreSQL pass (npm run test:postgresql) counts when it was asked for.
if (process.env.BATON_TEST_POSTGRESQL_URL) {
  reports.push(["test-results/postgresql/vitest.json", vitestCounts], ["test-results/postgresql/playwright.json", playwrightCounts]);
  // With both passes the SQLite pass's specs that start servers of their own run in a process of their own (scripts/test.ts).
  reports.push(["test-results/own-servers/playwright.json", playwrightCounts]);
}
for (const [file, read] of reports) {
  if (!existsSync(file)) {
    console.log(`${file}: missing (that suite did not run)`);
    total.failed += 1;
    continue;
  }
  const counts = read(file);
  console.log(`${file}: ${counts.passed} passed${counts.flaky ? ` (${counts.flaky} only on a retry)` : ""}, ${counts.failed} failed, ${counts.skipped} skipped`);
  total.passed += counts.passed;
  total.failed += counts.failed;
  total.skipped += counts.skipped;
  total.failures.push(...counts.failures.map((failure) => `${failure}\n      (${file})`));
}
if (total.failures.length) console.log(`\nwhat failed, or passed only on a retry:\n${total.failures.join("\n")}\n`);
console.log(`${total.passed} passed, ${total.failed} failed${total.skipped ? `, ${total.skipped} skipped` : ""}`);
