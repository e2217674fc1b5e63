/**
 * Where `npm test`'s steps write their reports (scripts/test.ts) and where the closing summary
 * reads them (scripts/test-summary.ts): one list, so a new step is never left uncounted.
 */
export const SQLITE_RESULTS = "test-results";
export const POSTGRESQL_RESULTS = "test-results/postgresql";
/** With both passes: the SQLite pass's specs with servers of their own (playwright.config.ts BATON_E2E_PART). */
export const OWN_SERVERS_RESULTS = "test-results/own-servers";
/** With both passes: each pass's second half of the app specs (playwright.config.ts BATON_E2E_HALF). */
export const SQLITE_SECOND_HALF_RESULTS = "test-results/sqlite-second-half";
export const POSTGRESQL_SECOND_HALF_RESULTS = "test-results/postgresql-second-half";

export type ReportKind = "vitest" | "playwright";

/** The reports a run writes: the SQLite pass's, and with PostgreSQL its pass's and the split SQLite steps'. */
export function expectedReports(withPostgresql: boolean): [file: string, kind: ReportKind][] {
  const reports: [string, ReportKind][] = [
    [`${SQLITE_RESULTS}/vitest.json`, "vitest"],
    [`${SQLITE_RESULTS}/playwright.json`, "playwright"],
  ];
  if (!withPostgresql) return reports;
  return [
    ...reports,
    [`${POSTGRESQL_RESULTS}/vitest.json`, "vitest"],
    [`${POSTGRESQL_RESULTS}/playwright.json`, "playwright"],
    [`${OWN_SERVERS_RESULTS}/playwright.json`, "playwright"],
    [`${SQLITE_SECOND_HALF_RESULTS}/playwright.json`, "playwright"],
    [`${POSTGRESQL_SECOND_HALF_RESULTS}/playwright.json`, "playwright"],
  ];
}
