import "server-only";
import { stat } from "node:fs/promises";
import { readRegularFile } from "../server/fs/read-regular-file";
import path from "node:path";
import type { z } from "zod";
import { BatonError } from "../core/errors";
import type { ReviewReportDto, VerificationReportDto } from "../views/verdict/dto";
import { parseReport } from "../views/verdict/reports";
import {
  agentStateSchema,
  diffSummarySchema,
  featureListSchema,
  feedbackRecordSchema,
  pathSegment,
  WORKBENCH_PATHS,
  type AgentState,
  type DiffSummary,
  type FeatureList,
  type FeedbackRecord,
} from "./schemas";

/** Everything `generate` and `check` read from a workspace root; a missing optional file is null and listed in `missing`. */
export interface Workbench {
  root: string;
  taskId: string | null;
  state: AgentState | null;
  verification: VerificationReportDto | null;
  review: ReviewReportDto | null;
  feedback: FeedbackLog | null;
  diffSummary: DiffSummary | null;
  featureList: FeatureList | null;
  /** Relative paths of the optional files that were looked for and not found, in reading order. */
  missing: string[];
  /** Relative paths of the files read, in reading order. */
  read: string[];
  /** Modification times of the files read (ms): the newest is an input to created_at. */
  mtimesMs: number[];
}

export interface FeedbackLog {
  /** Well-formed records with their 1-based line numbers, in log order. */
  records: { line: number; record: FeedbackRecord }[];
  /** Lines that could not be used; the others still are. */
  malformed: { line: number; problem: string }[];
}

type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

/** Reads every artifact; throws a BatonError naming the file when one is malformed. */
export async function readWorkbench(root: string, options: { taskId?: string } = {}): Promise<Workbench> {
  const bench: Workbench = {
    root,
    taskId: null,
    state: null,
    verification: null,
    review: null,
    feedback: null,
    diffSummary: null,
    featureList: null,
    missing: [],
    read: [],
    mtimesMs: [],
  };
  const load = async <T>(relative: string, parse: (json: unknown) => Parsed<T>, noteIfMissing = true): Promise<T | null> => {
    const file = await readOptional(root, relative);
    if (!file) {
      if (noteIfMissing) bench.missing.push(relative);
      return null;
    }
    bench.read.push(relative);
    bench.mtimesMs.push(file.mtimeMs);
    const parsed = parse(parseJson(relative, file.text));
    if (!parsed.ok) throw new BatonError("invalid_fields", `${relative}: ${parsed.problem}. Fix the file and run again.`, { file: relative });
    return parsed.value;
  };

  bench.state = await load(WORKBENCH_PATHS.state, withSchema(agentStateSchema));
  bench.featureList = await load(WORKBENCH_PATHS.featureList, withSchema(featureListSchema));
  bench.taskId = resolveTaskId(options.taskId ?? bench.state?.active_task_id ?? bench.featureList?.active ?? null);
  if (bench.taskId) {
    bench.verification = await load(WORKBENCH_PATHS.verification(bench.taskId), (json) => report("verification", json));
    bench.review = await load(WORKBENCH_PATHS.review(bench.taskId), (json) => report("review", json));
  }
  // An alternative to the git diff, not an expected file: its absence is not news.
  bench.diffSummary = await load(WORKBENCH_PATHS.diffSummary, withSchema(diffSummarySchema), false);

  const log = await readOptional(root, WORKBENCH_PATHS.feedback);
  if (log) {
    bench.read.push(WORKBENCH_PATHS.feedback);
    bench.mtimesMs.push(log.mtimeMs);
    bench.feedback = parseFeedbackLog(log.text);
  } else bench.missing.push(WORKBENCH_PATHS.feedback);
  return bench;
}

function resolveTaskId(value: string | null): string | null {
  if (value === null || value.trim() === "") return null;
  const parsed = pathSegment.safeParse(value.trim());
  if (!parsed.success) {
    throw new BatonError("invalid_request", `Task id ${JSON.stringify(value)} cannot name a report file: ${parsed.error.issues[0]?.message}.`);
  }
  return parsed.data;
}

/** JSONL: blank lines are skipped; a bad line is reported with its number and the rest are used. */
export function parseFeedbackLog(text: string): FeedbackLog {
  const log: FeedbackLog = { records: [], malformed: [] };
  stripBom(text)
    .split(/\r?\n/)
    .forEach((raw, index) => {
      const line = index + 1;
      if (raw.trim() === "") return;
      let json: unknown;
      try {
        json = JSON.parse(raw);
      } catch (error) {
        log.malformed.push({ line, problem: `not valid JSON (${jsonProblem(error, raw)})` });
        return;
      }
      const parsed = feedbackRecordSchema.safeParse(json);
      if (parsed.success) log.records.push({ line, record: parsed.data });
      else log.malformed.push({ line, problem: describeIssues(parsed.error) });
    });
  return log;
}

/** Workbench files are the agent's: at most this much is read of one (a log may be long, never unbounded). */
export const WORKBENCH_FILE_MAX_BYTES = 16 * 1024 * 1024;

async function readOptional(root: string, relative: string): Promise<{ text: string; mtimeMs: number } | null> {
  const file = path.join(root, relative);
  let reading;
  try {
    // Regular files only, never past the limit: a FIFO or a link to /dev/zero must not hang or fill memory.
    reading = await readRegularFile(file, { maxBytes: WORKBENCH_FILE_MAX_BYTES, linksWithin: root });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new BatonError("invalid_request", `${relative} cannot be read (${code ?? (error as Error).message}).`, { file: relative });
  }
  if (reading.kind === "missing") return null;
  if (reading.kind === "refused") throw new BatonError("invalid_request", `${relative} was not read: ${reading.reason}.`, { file: relative });
  if (reading.kind === "too_large") {
    throw new BatonError("payload_too_large", `${relative} is larger than ${WORKBENCH_FILE_MAX_BYTES / (1024 * 1024)} MiB; Baton reads workbench files up to that size.`, {
      file: relative,
      limit_bytes: WORKBENCH_FILE_MAX_BYTES,
    });
  }
  const info = await stat(file);
  return { text: reading.bytes.toString("utf8"), mtimeMs: Math.floor(info.mtimeMs) };
}

function parseJson(relative: string, text: string): unknown {
  try {
    return JSON.parse(stripBom(text));
  } catch (error) {
    throw new BatonError("invalid_json", `${relative} is not valid JSON: ${jsonProblem(error, stripBom(text))}. Fix the file and run again.`, {
      file: relative,
    });
  }
}

const stripBom = (text: string) => (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);

/** V8's message, with a line and column added when it gives only a position (Node 20 does). */
function jsonProblem(error: unknown, text: string): string {
  // V8 may quote the text around the error, newlines included: keep the message on one line.
  // Newer V8 adds its own "(line N column M)"; it is replaced by ours, the same on every Node.
  const message = (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, " ").replace(/ \(line \d+ column \d+\)/, "");
  const at = /at position (\d+)/.exec(message);
  if (!at) return message;
  const before = text.slice(0, Number(at[1]));
  const column = before.length - before.lastIndexOf("\n");
  // A feedback log line is one line: its number is given with the problem, so only the column is.
  return text.includes("\n") ? `${message} (line ${before.split("\n").length}, column ${column})` : `${message} (column ${column})`;
}

function withSchema<T extends z.ZodType>(schema: T) {
  return (json: unknown): Parsed<z.output<T>> => {
    const parsed = schema.safeParse(json);
    return parsed.success ? { ok: true, value: parsed.data } : { ok: false, problem: describeIssues(parsed.error) };
  };
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length ? issue.path.map((part) => (typeof part === "number" ? `[${part}]` : `.${String(part)}`)).join("").replace(/^\./, "") : "(top level)"}: ${issue.message}`)
    .join("; ");
}

function report<K extends "verification" | "review">(
  kind: K,
  json: unknown,
): Parsed<K extends "verification" ? VerificationReportDto : ReviewReportDto> {
  const parsed = parseReport(kind, json);
  if (!parsed.ok) return { ok: false, problem: parsed.reason };
  return { ok: true, value: parsed.report as K extends "verification" ? VerificationReportDto : ReviewReportDto };
}
