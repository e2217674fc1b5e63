import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * Figures the hardening suite measures (bodies sent, statuses, slowest request...),
 * kept in test-results/reliability/<section>.json; scripts/reliability-report.ts
 * renders them into docs/reliability.md. A figure recorded again replaces the old one.
 */

export interface ReliabilityFigure {
  name: string;
  value: number | string;
  note?: string;
  /** For an attack class or a secret kind: payloads tried; `value` is then how many got through. */
  tried?: number;
  recorded_at: string;
}

export interface ReliabilitySection {
  section: string;
  figures: ReliabilityFigure[];
}

// The PostgreSQL pass (scripts/test.ts) keeps its figures apart; docs/reliability.md shows SQLite's.
export const RELIABILITY_DIR = process.env.BATON_RELIABILITY_DIR ?? path.join(process.cwd(), "test-results", "reliability");

const SECTION_NAME = /^[a-z0-9][a-z0-9-]*$/;

export function sectionFile(section: string, dir = RELIABILITY_DIR): string {
  if (!SECTION_NAME.test(section)) throw new Error(`a reliability section is lower-case words joined by "-", got ${JSON.stringify(section)}`);
  return path.join(dir, `${section}.json`);
}

export function readSection(file: string): ReliabilitySection | null {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as ReliabilitySection;
  } catch {
    return null;
  }
}

export function recordFigure(section: string, name: string, value: number | string, note?: string, dir = RELIABILITY_DIR): void {
  writeFigure(section, { name, value, ...(note ? { note } : {}), recorded_at: new Date().toISOString() }, dir);
}

/**
 * Payloads of one kind (an attack class, a kind of secret) tried, and how many got through:
 * docs/reliability.md lists them in one table, where every "got through" should be 0.
 */
export function recordAttempts(section: string, name: string, tried: number, through: number, note?: string, dir = RELIABILITY_DIR): void {
  writeFigure(section, { name, value: through, tried, ...(note ? { note } : {}), recorded_at: new Date().toISOString() }, dir);
}

function writeFigure(section: string, figure: ReliabilityFigure, dir: string): void {
  const file = sectionFile(section, dir);
  mkdirSync(dir, { recursive: true });
  const current = readSection(file) ?? { section, figures: [] };
  const name = figure.name;
  const index = current.figures.findIndex((existing) => existing.name === name);
  if (index >= 0) current.figures[index] = figure;
  else current.figures.push(figure);
  // Written beside and renamed: a reader never sees half a file.
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(current, null, 2)}\n`);
  renameSync(temp, file);
}
