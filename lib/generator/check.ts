import "server-only";
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { BatonError } from "../core/errors";
import { commandText } from "../contract/commands";
import { isTestCommand } from "./feedback";
import { readAllowList, type AllowList } from "./allow-list";
import { compare, readGitState, type GitState } from "./git";
import { readWorkbench, type Workbench } from "./read";
import { cleanStateFileSchema, WORKBENCH_PATHS, type CleanStateProblem } from "./schemas";
import { jsonText, writeIfChanged } from "./write-if-changed";

/**
 * The clean-state check: what must be true before a session hands off. Each
 * problem is blocking; `generate` refuses to write a packet while any remains
 * (unless --allow-dirty, and then the packet says so).
 */

export interface CheckOptions {
  taskId?: string;
  /** The branch this session should be on; else agent_state.json's `branch`; else any branch. */
  expectedBranch?: string;
}

export interface CheckResult {
  bench: Workbench;
  git: GitState;
  problems: CleanStateProblem[];
  /** Absolute path of the clean_state.json written. */
  cleanStatePath: string;
}

/** Per check, at most this many problems are listed; the rest are counted in one more. */
export const PROBLEMS_PER_CHECK = 20;

export async function checkWorkbench(root: string, options: CheckOptions = {}): Promise<CheckResult> {
  // Checked first: writing clean_state.json would otherwise create the folder a typo named.
  if (!(await stat(root).catch(() => null))?.isDirectory()) {
    throw new BatonError("invalid_request", `The workspace root ${root} is not a folder; point --root at the folder holding outputs/.`);
  }
  const [bench, git, allowed] = await Promise.all([readWorkbench(root, { taskId: options.taskId }), readGitState(root), readAllowList(root)]);
  const problems = [
    ...capped("working_tree", uncommittedChanges(git, allowed)),
    ...gitHeadProblems(git, options.expectedBranch ?? bench.state?.branch ?? null),
    ...capped("temp_files", await leftoverTempFiles(root, allowed)),
    ...lastTestRunProblems(bench),
    ...featureListProblems(bench),
  ];
  const cleanStatePath = path.join(root, WORKBENCH_PATHS.cleanState);
  await writeIfChanged(cleanStatePath, jsonText(cleanStateFileSchema.parse({ clean: problems.length === 0, blocking: problems })));
  return { bench, git, problems, cleanStatePath };
}

/**
 * The workbench's own session artifacts change every session and are not the
 * agent's work: they never make the tree dirty, nor count as changed files.
 * feature_list.json is project state and is expected to be committed.
 */
export function isWorkbenchArtifact(repoPath: string, prefix: string): boolean {
  if (!repoPath.startsWith(prefix)) return false;
  const inRoot = repoPath.slice(prefix.length);
  return inRoot === WORKBENCH_PATHS.state || inRoot === WORKBENCH_PATHS.feedback || inRoot.startsWith("outputs/");
}

const STATUS_WORDS: Record<string, string> = {
  M: "modified",
  T: "type changed",
  A: "added",
  D: "deleted",
  U: "unmerged (a conflict)",
};

function uncommittedChanges(git: GitState, allowed: AllowList): string[] {
  return git.status
    .filter((entry) => !isWorkbenchArtifact(entry.path, git.prefix))
    .filter((entry) => !(entry.path.startsWith(git.prefix) && allowed.allows(entry.path.slice(git.prefix.length))))
    .map((entry) => {
      if (entry.code === "??") return `${entry.path} is not tracked and not committed`;
      const staged = STATUS_WORDS[entry.code[0]!];
      const unstaged = STATUS_WORDS[entry.code[1]!];
      const what = staged && unstaged && staged !== unstaged ? `${staged} (staged), then ${unstaged}` : (staged ?? unstaged ?? entry.code.trim());
      return `${entry.path} ${what} and not committed`;
    });
}

function gitHeadProblems(git: GitState, expected: string | null): CleanStateProblem[] {
  if (!git.repo) return [];
  if (git.branch === null) {
    return [{ check: "git_head", detail: `HEAD is detached at ${git.head?.slice(0, 12) ?? "an unknown commit"}; commit the work to a branch` }];
  }
  if (expected && git.branch !== expected) {
    return [{ check: "git_head", detail: `on branch ${git.branch}, expected ${expected}` }];
  }
  return [];
}

/** `*.tmp` files and scratch folders anywhere under the root; .git and node_modules are not searched. */
const SCRATCH_FOLDER = /^\.?scratch([-_.].*)?$/i;

async function leftoverTempFiles(root: string, allowed: AllowList): Promise<string[]> {
  const found: string[] = [];
  const walk = async (relative: string): Promise<void> => {
    const entries = await readdir(path.join(root, relative), { withFileTypes: true }).catch(() => []);
    for (const entry of entries.sort((a, b) => compare(a.name, b.name))) {
      const child = relative ? `${relative}/${entry.name}` : entry.name;
      if (allowed.allows(child)) continue;
      if (entry.isDirectory()) {
        if (entry.name === ".git" || entry.name === "node_modules") continue;
        if (SCRATCH_FOLDER.test(entry.name)) found.push(`scratch folder ${child}/ left behind`);
        else await walk(child);
      } else if (entry.name.toLowerCase().endsWith(".tmp")) {
        found.push(`temporary file ${child} left behind`);
      }
    }
  };
  await walk("");
  return found;
}

function lastTestRunProblems(bench: Workbench): CleanStateProblem[] {
  const problem = (detail: string) => [{ check: "last_test_run", detail }];
  if (!bench.feedback) return problem(`unknown: ${WORKBENCH_PATHS.feedback} not found, so no test run is recorded`);
  const last = bench.feedback.records.findLast((entry) => isTestCommand(entry.record.command));
  if (!last) return problem(`unknown: no test command in ${WORKBENCH_PATHS.feedback}`);
  const { record, line } = last;
  const what = `last test run \`${commandText(record.command)}\` (${WORKBENCH_PATHS.feedback} line ${line})`;
  if (record.exit_code === null || record.exit_code === undefined) return problem(`unknown: ${what} has no exit code`);
  if (record.exit_code !== 0) return problem(`failing: ${what} exited ${record.exit_code}`);
  return [];
}

const IN_PROGRESS = new Set(["in_progress", "doing", "active", "wip", "started"]);
const FINISHED = new Set(["done", "complete", "completed", "finished", "passing", "passed", "closed"]);
const statusWord = (status: string) => status.trim().toLowerCase().replace(/[\s-]+/g, "_");

function featureListProblems(bench: Workbench): CleanStateProblem[] {
  const list = bench.featureList;
  if (!list) return [];
  const problems: CleanStateProblem[] = [];
  const problem = (detail: string) => problems.push({ check: "feature_list", detail });
  const inProgress = list.features.filter((feature) => IN_PROGRESS.has(statusWord(feature.status)));
  if (inProgress.length > 1) {
    problem(`${inProgress.length} features are in progress at once (${inProgress.map((feature) => feature.id).join(", ")}); finish or park all but one`);
  }
  if (list.active != null) {
    const active = list.features.find((feature) => feature.id === list.active);
    if (!active) problem(`active names ${list.active}, which is not in features`);
    else if (FINISHED.has(statusWord(active.status))) problem(`active names ${list.active}, which is already ${active.status}`);
  }
  return problems;
}

function capped(check: string, details: string[]): CleanStateProblem[] {
  const shown = details.slice(0, PROBLEMS_PER_CHECK).map((detail) => ({ check, detail }));
  const more = details.length - shown.length;
  return more > 0 ? [...shown, { check, detail: `and ${more} more like these` }] : shown;
}
