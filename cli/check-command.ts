import path from "node:path";
import { CommanderError, type Command } from "commander";
import { BatonError } from "../lib/core/errors";
import type { CheckResult } from "../lib/generator/check";
import type { CleanStateProblem } from "../lib/generator/schemas";
import { ALLOW_LIST_HINT } from "../lib/generator/allow-list";

/** Exit codes of `baton check` and `baton generate`, one table for both. */
export const WORKBENCH_EXIT = { ok: 0, dirty: 1, unreadable: 2, notPushed: 3 } as const;

const ROOT_OPTION_HELP = "the workspace root: the folder holding agent_state.json and outputs/";
export const BRANCH_OPTION_HELP = "the branch this session should be on";

export const CHECKS_HELP = `
Blocking problems (each is one line "check: detail"):
  working_tree   uncommitted changes (the workbench's own agent_state.json,
                 feedback_record.jsonl and outputs/ are not counted, nor the
                 paths listed in .batonignore)
  temp_files     *.tmp files or scratch folders left under the root (except
                 those listed in .batonignore)
  last_test_run  the last test command in feedback_record.jsonl failed, has no
                 exit code, or there is none
  feature_list   more than one feature in progress, or "active" naming a
                 missing or finished feature
  git_head       a detached HEAD, or a branch other than --branch (default:
                 agent_state.json's "branch", if any)`;

/** Paths as the person typed them when below the current folder, else absolute. */
export function displayPath(file: string): string {
  const relative = path.relative(process.cwd(), file);
  return relative && !relative.startsWith("..") && !path.isAbsolute(relative) ? relative : file;
}

export function printProblems(command: string, problems: CleanStateProblem[], cleanStatePath: string): void {
  console.error(`baton ${command}: ${problems.length} blocking problem${problems.length === 1 ? "" : "s"} (also in ${displayPath(cleanStatePath)}):`);
  for (const problem of problems) console.error(`  ${problem.check}: ${problem.detail}`);
  if (problems.some((problem) => problem.check === "working_tree" || problem.check === "temp_files")) {
    console.error(`baton ${command}: ${ALLOW_LIST_HINT}`);
  }
}

/** A workbench file that cannot be read is exit 2, with the file and the problem named. */
export function reportUnreadable(command: string, error: unknown, setExitCode: (code: number) => void): void {
  if (!(error instanceof BatonError)) throw error;
  console.error(`baton ${command}: ${error.message}`);
  setExitCode(WORKBENCH_EXIT.unreadable);
}

/** Usage errors exit 2 like any unusable input, so that 1 always means "blocking problems". */
function usageErrorsExitTwo(command: Command): Command {
  return command.exitOverride((error) => {
    throw error.exitCode === 0 ? error : new CommanderError(WORKBENCH_EXIT.unreadable, error.code, error.message);
  });
}

/** `baton check` and `baton generate`: both read an agent's workbench, named by --root, and exit by WORKBENCH_EXIT. */
export function addWorkbenchCommand(program: Command, name: string, description: string): Command {
  return usageErrorsExitTwo(program.command(name)).description(description).option("--root <dir>", ROOT_OPTION_HELP, ".");
}

export function addCheckCommand(program: Command, setExitCode: (code: number) => void): void {
  addWorkbenchCommand(program, "check", "Check that the agent's workbench is clean enough to hand off; writes outputs/clean_state.json.")
    .option("--task <id>", "the task whose reports are read (default: agent_state.json's active_task_id)")
    .option("--branch <name>", BRANCH_OPTION_HELP)
    .addHelpText(
      "after",
      `${CHECKS_HELP}

Prints the path of clean_state.json on stdout and the problems on stderr.

Exit codes:
  0  clean: no blocking problems
  1  blocking problems (listed, and written to outputs/clean_state.json)
  2  a workbench file cannot be read, or an option is invalid (the problem is named)

Example:
  baton check --root . && baton generate --root . --push`,
    )
    .action(async (options: { root: string; task?: string; branch?: string }) => {
      const { checkWorkbench } = await import("../lib/generator/check");
      let result: CheckResult;
      try {
        result = await checkWorkbench(path.resolve(options.root), { taskId: options.task, expectedBranch: options.branch });
      } catch (error) {
        reportUnreadable("check", error, setExitCode);
        return;
      }
      console.log(displayPath(result.cleanStatePath));
      for (const { line, problem } of result.bench.feedback?.malformed ?? []) {
        console.error(`baton check: feedback_record.jsonl line ${line} skipped: ${problem}`);
      }
      if (!result.problems.length) {
        console.error("baton check: clean");
        return;
      }
      printProblems("check", result.problems, result.cleanStatePath);
      setExitCode(WORKBENCH_EXIT.dirty);
    });
}
