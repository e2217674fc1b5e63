import { InvalidArgumentError, type Command } from "commander";
import type { PushOutcome } from "./sync/push";
import { DEFAULT_TAIL_K } from "../lib/generator/feedback";
import type { GenerateResult } from "../lib/generator/generate";
import { addWorkbenchCommand, BRANCH_OPTION_HELP, CHECKS_HELP, displayPath, printProblems, reportUnreadable, WORKBENCH_EXIT } from "./check-command";

interface GenerateCommandOptions {
  root: string;
  task?: string;
  sessionId?: string;
  createdAt?: string;
  agent?: string;
  branch?: string;
  k: number;
  push?: boolean;
  allowDirty?: boolean;
}

function count(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError("expected a whole number, 0 or more");
  return Number(value);
}

export function addGenerateCommand(program: Command, setExitCode: (code: number) => void): void {
  addWorkbenchCommand(program, "generate", "Build this session's handoff packet from the agent's workbench (runs `baton check` first).")
    .option("--task <id>", "the task (default: agent_state.json's active_task_id, else feature_list.json's active)")
    .option("--session-id <id>", "the session id, naming outputs/handoff/<id>/ (default: derived from the inputs)")
    .option("--created-at <time>", "the packet's created_at, ISO-8601 (default: the newest input time)")
    .option("--agent <name>", "who produced the packet (default: agent_state.json's agent)")
    .option("--branch <name>", BRANCH_OPTION_HELP)
    .option("--k <count>", "feedback_tail keeps the last <count> records, plus every failing one", count, DEFAULT_TAIL_K)
    .option("--push", "send the packet to Baton (BATON_URL, BATON_TOKEN) with the client `baton push` uses")
    .option("--allow-dirty", "write the packet despite blocking problems; they go into clean_state and open_risks")
    .addHelpText(
      "after",
      `
Reads agent_state.json, outputs/verification/<task>.json, outputs/review/<task>.json,
feedback_record.jsonl, feature_list.json and outputs/diff_summary.json (or git),
and writes outputs/handoff/<session_id>/handoff.json and handoff.md (the same
markdown as the thread page). Earlier packets of the same thread under
outputs/handoff/ are marked "superseded". The same workbench gives the same bytes:
the session id and created_at derive from the inputs unless given.
${CHECKS_HELP}

Prints the paths written on stdout; problems, notes and the push result on stderr.

Exit codes:
  0  packet written (and pushed, with --push)
  1  refused: blocking problems (listed; pass --allow-dirty to hand off anyway)
  2  a workbench file cannot be read, or an option is invalid (the problem is named)
  3  packet written, but --push failed

Examples:
  baton check && baton generate --push
  baton generate --root ../agent-7 --task T-014 --allow-dirty`,
    )
    .action(async (options: GenerateCommandOptions) => {
      const { generateHandoff } = await import("../lib/generator/generate");
      let result: GenerateResult;
      try {
        result = await generateHandoff({
          root: options.root,
          taskId: options.task,
          sessionId: options.sessionId,
          createdAt: options.createdAt,
          agent: options.agent,
          expectedBranch: options.branch,
          k: options.k,
          allowDirty: options.allowDirty === true,
        });
      } catch (error) {
        reportUnreadable("generate", error, setExitCode);
        return;
      }
      console.log(displayPath(result.cleanStatePath));
      if (result.refused) {
        printProblems("generate", result.problems, result.cleanStatePath);
        console.error("baton generate: no packet written; fix the problems, or pass --allow-dirty to hand off with them recorded");
        setExitCode(WORKBENCH_EXIT.dirty);
        return;
      }
      for (const file of [...result.files.map((item) => item.path), ...result.superseded]) console.log(displayPath(file));
      if (result.problems.length) printProblems("generate", result.problems, result.cleanStatePath);
      for (const note of result.notes) console.error(`baton generate: note: ${note}`);
      const unchanged = result.files.every((file) => !file.written) ? " (unchanged)" : "";
      console.error(`baton generate: packet ${String(result.packet.session_id)} for thread ${result.threadKey}${unchanged}`);
      if (result.superseded.length) console.error(`baton generate: marked ${result.superseded.length} earlier packet(s) superseded`);
      if (options.push && !(await push(result.files[0]!.path))) setExitCode(WORKBENCH_EXIT.notPushed);
    });
}

/** Through cli/sync/push.ts, so a generated packet travels exactly as `baton push` would send it. */
async function push(file: string): Promise<boolean> {
  const { describePushed, pushPacketFile, pushTargetFromEnv } = await import("./sync/push");
  let outcome: PushOutcome;
  try {
    outcome = await pushPacketFile(pushTargetFromEnv(), file);
  } catch (error) {
    outcome = { ok: false, status: null, message: (error as Error).message };
  }
  if (outcome.ok) {
    console.error(`baton generate: pushed: ${outcome.duplicate ? "duplicate" : "stored"} ${outcome.packetId} thread=${outcome.threadKey}${describePushed(outcome)}`);
    return true;
  }
  console.error(`baton generate: push failed${outcome.status ? ` (HTTP ${outcome.status})` : ""}: ${outcome.message}; the packet is on disk`);
  return false;
}
