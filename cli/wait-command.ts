import { InvalidArgumentError, Option, type Command } from "commander";
import { formatPacket, pullTarget } from "./sync/pull";
import { WAIT_EXIT, WAIT_FOR, waitForAction, type Seen, type WaitFor } from "./sync/wait-for-action";
import { writeFileAtomic } from "../lib/server/fs/atomic-write";

/**
 * `baton wait`: blocks until a person acts on a thread (cli/sync/wait-for-action.ts),
 * then writes the merged packet and exits with a code saying what happened.
 */

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** `90`, `90s`, `30m`, `2h`, `1500ms` as milliseconds (a bare number is seconds). */
export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  const ms = match ? Number(match[1]) * UNITS[match[2] ?? "s"]! : Number.NaN;
  if (!Number.isFinite(ms) || ms <= 0) throw new InvalidArgumentError("give a duration such as 90s, 30m or 2h.");
  return ms;
}

function parseRevision(text: string): number {
  if (!/^\d{1,15}$/.test(text)) throw new InvalidArgumentError("give a human-section revision: a whole number, 0 or more.");
  return Number(text);
}

export interface WaitOptions {
  for: WaitFor;
  timeout: number;
  after?: number;
  output?: string;
  server?: string;
  token?: string;
}

/** Runs `baton wait`; resolves to its exit code. */
export async function waitForPerson(thread: string, options: WaitOptions): Promise<number> {
  const say = (text: string) => console.error(`baton wait: ${text}`);
  const result = await waitForAction(pullTarget(options), thread, { for: options.for, timeoutMs: options.timeout, after: options.after, say });
  if (result.kind === "error") {
    say(`failed: ${result.message}`);
    return WAIT_EXIT.error;
  }
  if (result.kind === "timedOut") return timedOut(say, options.timeout, result.revision);
  return finish(thread, options, result.seen, result.description, result.code, say);
}

function timedOut(say: (text: string) => void, timeoutMs: number, revision: number | null): number {
  say(`timed out after ${formatDuration(timeoutMs)}${revision === null ? "" : ` (still at revision ${revision})`}`);
  return WAIT_EXIT.timedOut;
}

const formatDuration = (ms: number) => (ms % 3_600_000 === 0 ? `${ms / 3_600_000}h` : ms % 60_000 === 0 ? `${ms / 60_000}m` : ms % 1_000 === 0 ? `${ms / 1_000}s` : `${ms}ms`);

async function finish(thread: string, options: WaitOptions, seen: Seen, description: string, code: number, say: (text: string) => void): Promise<number> {
  const text = formatPacket(seen.body);
  if (options.output) {
    try {
      await writeFileAtomic(options.output, text);
    } catch (error) {
      say(`cannot write ${options.output}: ${(error as Error).message}`);
      return WAIT_EXIT.error;
    }
  } else {
    process.stdout.write(text);
  }
  say(`${description} on ${thread}${options.output ? `; wrote ${options.output}` : ""}`);
  return code;
}

export function addWaitCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command("wait")
    .description("Block until a person acts on a thread, then print its merged handoff packet; the exit code says what happened.")
    .argument("<thread>", "the thread key, e.g. acme@main")
    .addOption(new Option("--for <what>", "what to wait for").choices([...WAIT_FOR]).default("decision"))
    .addOption(new Option("--timeout <duration>", "give up after this long: 90s, 30m, 2h").argParser(parseDuration).default(parseDuration("30m"), "30m"))
    .option("--after <revision>", "count what happened after this human-section revision (default: the current one)", parseRevision)
    .option("-o, --output <file>", "write the packet to this file (atomically) instead of stdout")
    .option("--server <url>", "Baton's URL (default: BATON_URL, else http://localhost:3000)")
    .option("--token <token>", "an API token with the packets:read scope (default: BATON_TOKEN)")
    .addHelpText(
      "after",
      `
What counts (from the revision current when the command starts, or --after N):
  decision  a person approves or intervenes (the default)
  answers   a person answers some of the agent's questions
  any       either (a decision's code wins when both happened)
If a newer packet becomes active on the thread meanwhile, the command waits on that one.

Exit codes:
   0  approved: go ahead with next_action
  10  intervened: address human.questions first
  11  answered: the answers are in human.answers
   2  timed out: nobody acted (nothing is written)
   1  error: bad token, unknown thread, unusable answer or option

The packet goes to stdout (or -o FILE), the account of what happened to stderr.
It waits with GET /api/v1/threads/{thread}/handoff?wait=60&after=<revision>, and
survives a Baton restart or a dropped connection: it reconnects with backoff and
resumes from the last revision it saw, until the timeout.

Examples:
  baton wait acme@main --timeout 2h -o handoff.json; echo $?
  baton wait acme@main --for answers | jq -r '.human.answers[] | "\\(.question_id): \\(.answer)"'`,
    )
    .action(async (thread: string, options: WaitOptions) => {
      setExitCode(await waitForPerson(thread, options));
    });
}
