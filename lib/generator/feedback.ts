import { commandText } from "../contract/commands";
import type { FeedbackLog } from "./read";
import type { FeedbackRecord } from "./schemas";

/**
 * Feedback trimming (docs/decisions/016-feedback-trimming.md): the packet carries
 * the last K records plus every failing one, in log order, each cut to a bounded
 * size. Failing runs keep a longer output tail than passing ones, because their
 * output is the evidence the next session needs; a passing run's exit code says
 * most of what matters. The full log stays in feedback_record.jsonl.
 */

export const DEFAULT_TAIL_K = 5;

/** Characters of output kept per record: [stdout, stderr]. */
export const TAIL_CHARS = {
  failing: { stdout: 1500, stderr: 2500 },
  passing: { stdout: 0, stderr: 400 },
} as const;
export const COMMAND_MAX_CHARS = 500;
export const ARGV_MAX_ITEMS = 64;
/**
 * At most this many failing records (the most recent): a log of thousands of
 * failures would otherwise outgrow Baton's 1 MiB packet limit. The omitted count
 * is stated in the packet.
 */
export const FAILING_MAX_RECORDS = 100;
/** commands_run lists at most this many records (the most recent). */
export const COMMANDS_RUN_MAX = 200;

export interface TrimmedRecord {
  /** The record's line in feedback_record.jsonl, to find it in full. */
  line: number;
  command: string | string[];
  exit_code: number | null;
  duration_ms?: number;
  started_at?: string | number;
  stdout_tail?: string;
  stderr_tail?: string;
}

export interface TrimmedFeedback {
  tail: TrimmedRecord[];
  failingOmitted: number;
}

/** Non-zero, or null (no exit code: killed, timed out, or never recorded). */
export const isFailing = (record: FeedbackRecord) => record.exit_code !== 0;

export function trimFeedback(log: FeedbackLog, k: number): TrimmedFeedback {
  const { records } = log;
  const failing = records.map((_, index) => index).filter((index) => isFailing(records[index]!.record));
  const keptFailing = failing.slice(-FAILING_MAX_RECORDS);
  const keep = new Set([...keptFailing, ...records.map((_, index) => index).slice(records.length - Math.min(k, records.length))]);
  const tail = [...keep].sort((a, b) => a - b).map((index) => trimRecord(records[index]!.line, records[index]!.record));
  return { tail, failingOmitted: failing.length - keptFailing.length };
}

function trimRecord(line: number, record: FeedbackRecord): TrimmedRecord {
  const limits = isFailing(record) ? TAIL_CHARS.failing : TAIL_CHARS.passing;
  const out: TrimmedRecord = { line, command: boundCommand(record.command), exit_code: record.exit_code ?? null };
  if (record.duration_ms != null) out.duration_ms = record.duration_ms;
  if (record.started_at != null) out.started_at = record.started_at;
  const stdout = tailOf(record.stdout_tail, limits.stdout);
  if (stdout) out.stdout_tail = stdout;
  const stderr = tailOf(record.stderr_tail, limits.stderr);
  if (stderr) out.stderr_tail = stderr;
  return out;
}

/** Argv stays argv (Baton joins it for display); both forms are bounded. */
export function boundCommand(command: string | string[]): string | string[] {
  if (typeof command === "string") return headOf(command, COMMAND_MAX_CHARS);
  const items = command.slice(0, ARGV_MAX_ITEMS).map((arg) => headOf(arg, COMMAND_MAX_CHARS));
  return command.length > ARGV_MAX_ITEMS ? [...items, `[${command.length - ARGV_MAX_ITEMS} more arguments cut]`] : items;
}

const headOf = (text: string, max: number) => (text.length <= max ? text : `${dropHalfPair(text.slice(0, max), "end")}[… ${text.length - max} chars cut]`);

/** The end of an output, where errors are; what was cut is said at the start. */
function tailOf(text: string | null | undefined, max: number): string | undefined {
  if (!text || max === 0) return undefined;
  if (text.length <= max) return text;
  return `[… ${text.length - max} chars cut]${dropHalfPair(text.slice(-max), "start")}`;
}

/** A cut through a surrogate pair would leave half a character (invalid UTF-8 on disk). */
function dropHalfPair(text: string, side: "start" | "end"): string {
  const code = side === "start" ? text.charCodeAt(0) : text.charCodeAt(text.length - 1);
  if (side === "start" && code >= 0xdc00 && code <= 0xdfff) return text.slice(1);
  if (side === "end" && code >= 0xd800 && code <= 0xdbff) return text.slice(0, -1);
  return text;
}

/**
 * Commands that run a test suite, for the clean-state check's "last test run". A
 * heuristic over the command text: a known runner, or a `test` / `test:*`
 * argument after the program (npm test, go test, cargo test, npm run test:unit).
 */
const TEST_RUNNERS = new Set(["pytest", "py.test", "tox", "nox", "vitest", "jest", "mocha", "rspec", "phpunit", "ctest", "unittest"]);

export function isTestCommand(command: string | string[]): boolean {
  const words = commandText(command)
    .split(/\s+/)
    .map((word) => word.replace(/^['"]|['"]$/g, ""));
  return words.some((word, index) => TEST_RUNNERS.has(programName(word)) || (index > 0 && /^tests?(:[\w:-]+)?$/.test(word)));
}

const programName = (word: string) => word.slice(word.lastIndexOf("/") + 1);

/**
 * Why a run failed, in one line: its last line of output. The exit code is a
 * field of its own (the markdown shows it beside this), so it is not repeated.
 */
export function failureReason(record: FeedbackRecord): string | undefined {
  const lastLine = (record.stderr_tail ?? record.stdout_tail ?? "")
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean)
    .pop();
  if (lastLine) return headOf(lastLine, 200);
  return record.exit_code == null ? "no exit code: killed, timed out, or never recorded" : undefined;
}
