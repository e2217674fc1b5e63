import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ROOT, SetupError } from "./server";

/** Settings from the environment, figures, tables and result files shared by the benchmarks. */

/** A positive number from the environment variable `name`, else `fallback`; anything else is a SetupError. */
export function positiveNumber(name: string, fallback: number, integer: boolean): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new SetupError(`${name} must be a positive ${integer ? "integer" : "number"} (got "${raw}")`);
  }
  return value;
}

/** A switch from the environment variable `name`: 1 or 0, else `fallback` when unset; anything else is a SetupError. */
export function flagFromEnv(name: string, fallback: boolean): boolean {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  if (raw !== "0" && raw !== "1") throw new SetupError(`${name} must be 1 or 0 (got "${raw}")`);
  return raw === "1";
}

/** BENCH_PORT, or `fallback`. */
export function portFromEnv(fallback: number): number {
  const port = positiveNumber("BENCH_PORT", fallback, true);
  if (port > 65535) throw new SetupError(`BENCH_PORT must be at most 65535 (got ${port})`);
  return port;
}

export const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a");
export const verdict = (ok: boolean) => (ok ? "PASS" : "MISS");

/** A plain-text table: the first column left-aligned, the others right-aligned. */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)));
  const line = (cells: string[]) =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ").trimEnd();
  return [line(header), widths.map((width) => "-".repeat(width)).join("  "), ...rows.map(line)].join("\n");
}

export function gitRevision(): string {
  const result = spawnSync("git", ["describe", "--always", "--dirty"], { cwd: ROOT, encoding: "utf8" });
  return result.status === 0 ? result.stdout.trim() : "unknown";
}

/** Writes `value` as indented JSON to `file` (absolute), creating its folder. */
export function writeJson(file: string, value: unknown): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}
