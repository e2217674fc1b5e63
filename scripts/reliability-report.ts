import { execFileSync } from "node:child_process";
import { readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { readSection, RELIABILITY_DIR, type ReliabilitySection } from "../testing/reliability";

/**
 * Renders docs/reliability.md from the figures the hardening suite recorded in
 * test-results/reliability/*.json: one table per section, with the date and the
 * commit they were measured at. Run after `vitest run testing/hardening`.
 */

const TITLES: Record<string, string> = {
  "fuzzed-ingest": "Fuzzed ingest (testing/hardening/fuzz-ingest.test.ts)",
  limits: "Limits (testing/hardening/limits.test.ts)",
  "rate-limit": "Per-token rate limits (testing/hardening/rate-limit.test.ts)",
  paths: "Paths (testing/hardening/paths.test.ts)",
  secrets: "Secrets (testing/hardening/secrets.test.ts)",
  "redaction-corpus": "Redaction corpus (testing/hardening/redaction-corpus.test.ts)",
  volume: "5,000 risks, questions and files (testing/hardening/volume.test.ts)",
  access: "Access (testing/hardening/access.test.ts)",
  "hostile-content": "Hostile content (e2e/hostile-content.spec.ts, Chromium against next start)",
  memory: "Memory during 50 MiB attempts (e2e/memory.spec.ts, real HTTP to next start)",
  "busy-database": "Busy database (e2e/busy-database.spec.ts, real HTTP to next start)",
  overload: "Overload (e2e/overload.spec.ts, real HTTP to next start)",
  "crash-safety": "Crash safety (e2e/crash-safety.spec.ts, SIGKILL of next start)",
  // Recorded by the end-to-end suite on PostgreSQL (npm run test:postgresql), not by the hardening suite.
  instances: "Two instances on one PostgreSQL database (e2e/instances.spec.ts)",
};

function git(...args: string[]): string {
  try {
    return execFileSync("git", args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return "";
  }
}

const cell = (value: unknown) => String(value ?? "").replace(/\|/g, "\\|").replace(/\n/g, " ");

export function renderReliability(sections: ReliabilitySection[], commit: string, dirty: boolean): string {
  const lines = [
    "# Reliability figures",
    "",
    "Produced by the hardening suite; do not edit by hand. `npm test` records every figure (CI",
    "then runs `tsx scripts/reliability-report.ts`); `npm run test:hardening` re-measures the",
    "in-process sections alone. Sections from `testing/hardening/` send requests through the real route",
    "handlers in-process (HTTP semantics without the socket) against a temporary SQLite file;",
    "sections from `e2e/` drive a production `next start` over real HTTP (and Chromium), on SQLite,",
    "on a shared 2-core machine.",
    "",
    `Commit: \`${commit || "unknown"}\`${dirty ? " (with uncommitted changes)" : ""}`,
    "",
  ];
  // Payloads tried, by attack class and by kind of secret, in one table: every "got through" should be 0.
  const attempts = sections.flatMap((section) => section.figures.filter((figure) => figure.tried !== undefined).map((figure) => ({ section, figure })));
  if (attempts.length) {
    const through = attempts.reduce((sum, { figure }) => sum + Number(figure.value), 0);
    lines.push("## Payloads tried and how many got through", "", `${attempts.length} kinds of payload; ${through} got through in all (goal: 0 in every row).`, "");
    lines.push("| Section | Payload | Tried | Got through | Note |", "| --- | --- | ---: | ---: | --- |");
    for (const { section, figure } of attempts) lines.push(`| ${cell(section.section)} | ${cell(figure.name)} | ${cell(figure.tried)} | ${cell(figure.value)} | ${cell(figure.note)} |`);
    lines.push("");
  }
  for (const section of sections) {
    const figures = section.figures.filter((figure) => figure.tried === undefined);
    if (!figures.length) continue;
    const dates = section.figures.map((figure) => figure.recorded_at).sort();
    lines.push(`## ${TITLES[section.section] ?? section.section}`, "", `Measured ${dates.at(-1)?.slice(0, 10) ?? "never"}.`, "");
    lines.push("| Figure | Value | Note |", "| --- | ---: | --- |");
    for (const figure of figures) lines.push(`| ${cell(figure.name)} | ${cell(figure.value)} | ${cell(figure.note)} |`);
    lines.push("");
  }
  if (!sections.length) lines.push("No figures recorded yet: run `npm run test:hardening`.", "");
  return lines.join("\n");
}

function main(): void {
  let files: string[] = [];
  try {
    files = readdirSync(RELIABILITY_DIR).filter((name) => name.endsWith(".json")).sort();
  } catch {
    files = [];
  }
  const order = Object.keys(TITLES);
  const sections = files
    .map((name) => readSection(path.join(RELIABILITY_DIR, name)))
    .filter((section): section is ReliabilitySection => section !== null)
    .sort((a, b) => (order.indexOf(a.section) + 1 || 99) - (order.indexOf(b.section) + 1 || 99));
  const commit = git("rev-parse", "--short", "HEAD");
  const dirty = git("status", "--porcelain", "--untracked-files=no") !== "";
  const out = path.join(process.cwd(), "docs", "reliability.md");
  writeFileSync(out, renderReliability(sections, commit, dirty));
  console.log(`wrote ${path.relative(process.cwd(), out)}: ${sections.length} sections, ${sections.reduce((n, s) => n + s.figures.length, 0)} figures`);
}

main();
