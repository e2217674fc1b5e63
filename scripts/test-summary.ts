import { existsSync, readFileSync } from "node:fs";

/**
 * Prints one closing line, "N passed, N failed[, N skipped]", from the JSON
 * reports of Vitest and Playwright (test-results/*.json), so CI reads one figure.
 */
interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}

function vitestCounts(file: string): Counts {
  const report = JSON.parse(readFileSync(file, "utf8")) as {
    numPassedTests: number;
    numFailedTests: number;
    numPendingTests: number;
    numTodoTests: number;
    testResults: { status: string; assertionResults: { status: string }[] }[];
  };
  // A file that failed outside its tests (its setup or teardown threw) counts as one failure.
  const failedFiles = report.testResults.filter((file) => file.status === "failed" && !file.assertionResults.some((test) => test.status === "failed")).length;
  return { passed: report.numPassedTests, failed: report.numFailedTests + failedFiles, skipped: report.numPendingTests + report.numTodoTests };
}

function playwrightCounts(file: string): Counts {
  const report = JSON.parse(readFileSync(file, "utf8")) as {
    stats: { expected: number; unexpected: number; flaky: number; skipped: number };
  };
  const { expected, unexpected, flaky, skipped } = report.stats;
  return { passed: expected + flaky, failed: unexpected, skipped };
}

const total: Counts = { passed: 0, failed: 0, skipped: 0 };
const reports: [string, (file: string) => Counts][] = [
  ["test-results/vitest.json", vitestCounts],
  ["test-results/playwright.json", playwrightCounts],
];
// The PostgreSQL pass (npm run test:postgresql) counts when it was asked for.
if (process.env.BATON_TEST_POSTGRESQL_URL) {
  reports.push(["test-results/postgresql/vitest.json", vitestCounts], ["test-results/postgresql/playwright.json", playwrightCounts]);
}
for (const [file, read] of reports) {
  if (!existsSync(file)) {
    console.log(`${file}: missing (that suite did not run)`);
    total.failed += 1;
    continue;
  }
  const counts = read(file);
  console.log(`${file}: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
  total.passed += counts.passed;
  total.failed += counts.failed;
  total.skipped += counts.skipped;
}
console.log(`${total.passed} passed, ${total.failed} failed${total.skipped ? `, ${total.skipped} skipped` : ""}`);
