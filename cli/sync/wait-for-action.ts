import { emptyHumanSection, humanSectionSchema, type HumanAnswer, type HumanDecision, type HumanSection } from "../../lib/human/section";
import { handoffUrl } from "./pull";
import type { PushTarget } from "./push";

/**
 * Waiting for a person: the loop over the waiting read of GET /api/v1/threads/{key}/handoff
 * (docs/decisions/019-waiting-read.md) that `baton wait` (cli/wait-command.ts) and the MCP
 * server's `wait_for_decision` and `ask` share, and what each outcome means.
 */
/** Exit codes of `baton wait`. */
export const WAIT_EXIT = { approved: 0, error: 1, timedOut: 2, intervened: 10, answered: 11 } as const;
export const WAIT_FOR = ["decision", "answers", "any"] as const;
export type WaitFor = (typeof WAIT_FOR)[number];

/** Knobs the tests turn; people use the defaults. */
export const waitTuning = {
  /** Seconds one waiting request asks for (the server allows up to 300). */
  requestSeconds: 60,
  /** Waits before reconnecting after a failure, growing, then the last one repeated. */
  retryDelaysMs: [250, 500, 1_000, 2_000, 5_000],
  /** How much longer than its `wait` a request may take before the client gives it up as lost. */
  requestGraceMs: 15_000,
};

export interface Seen {
  packetId: string;
  revision: number;
  section: HumanSection;
  body: Record<string, unknown>;
}

/** What the command compares against; `section` null when only the revision is known (`--after N`). */
interface Baseline {
  packetId: string;
  revision: number;
  section: HumanSection | null;
}

type ReadResult =
  | { kind: "packet"; seen: Seen }
  | { kind: "unchanged" }
  | { kind: "retry"; message: string }
  | { kind: "fatal"; message: string };

function describeFailure(error: unknown): string {
  const { message, cause } = error as { message?: string; cause?: { message?: string; code?: string } };
  const detail = cause?.code ?? cause?.message;
  return detail ? `${message} (${detail})` : String(message ?? error);
}

/** One read: plain (`wait` absent) or waiting. Never throws. */
async function readHandoff(
  target: PushTarget,
  thread: string,
  wait?: { seconds: number; after: number; afterPacket: string },
  signal?: AbortSignal,
): Promise<ReadResult> {
  const url = new URL(handoffUrl(target, thread));
  let timeoutMs = waitTuning.requestGraceMs;
  if (wait) {
    url.searchParams.set("wait", wait.seconds.toFixed(3).replace(/\.?0+$/, ""));
    url.searchParams.set("after", String(wait.after));
    url.searchParams.set("after_packet", wait.afterPacket);
    timeoutMs += wait.seconds * 1000;
  }
  let response: Response;
  let text: string;
  try {
    response = await (target.fetch ?? fetch)(url, {
      headers: { authorization: `Bearer ${target.token}`, accept: "application/json" },
      signal: signal ? AbortSignal.any([AbortSignal.timeout(timeoutMs), signal]) : AbortSignal.timeout(timeoutMs),
    });
    text = await response.text();
  } catch (error) {
    return { kind: "retry", message: `cannot reach ${target.url}: ${describeFailure(error)}` };
  }
  if (response.status === 304) return { kind: "unchanged" };
  let payload: unknown = null;
  try {
    payload = JSON.parse(text);
  } catch {
    // Judged below.
  }
  const record = typeof payload === "object" && payload !== null && !Array.isArray(payload) ? (payload as Record<string, unknown>) : null;
  if (response.status === 200) {
    const human = humanSectionSchema.safeParse(record?.human);
    const packetId = response.headers.get("baton-packet-id");
    if (!record || !human.success || !packetId) return { kind: "fatal", message: `${target.url} answered with something other than a merged handoff packet` };
    return { kind: "packet", seen: { packetId, revision: human.data.revision, section: human.data, body: record } };
  }
  const error = (record?.error ?? null) as { message?: unknown } | null;
  const message = `HTTP ${response.status}: ${typeof error?.message === "string" ? error.message : text.slice(0, 200) || "no message"}`;
  // Baton restarting, a proxy in between, or too many waiters: worth another try.
  if (response.status >= 500 || response.status === 429 || response.status === 408) return { kind: "retry", message };
  return { kind: "fatal", message };
}

const sameDecision = (a: HumanDecision | null, b: HumanDecision | null) => a?.kind === b?.kind && a?.by === b?.by && a?.at === b?.at;

export interface Happened {
  decision: HumanDecision | null;
  answers: HumanAnswer[];
}

/** What people did on the baseline's packet since the baseline. */
function whatHappened(baseline: Baseline, seen: Seen): Happened {
  if (seen.revision <= baseline.revision) return { decision: null, answers: [] };
  const before = baseline.section;
  const decision = seen.section.decision && !(before && sameDecision(before.decision, seen.section.decision)) ? seen.section.decision : null;
  return { decision, answers: before ? seen.section.answers.slice(before.answers.length) : seen.section.answers };
}

/** The exit code when `happened` is what the command waits for, else null. */
function outcomeFor(waitFor: WaitFor, happened: Happened): number | null {
  const decisionCode = happened.decision ? (happened.decision.kind === "approved" ? WAIT_EXIT.approved : WAIT_EXIT.intervened) : null;
  const answeredCode = happened.answers.length ? WAIT_EXIT.answered : null;
  if (waitFor === "decision") return decisionCode;
  if (waitFor === "answers") return answeredCode;
  return decisionCode ?? answeredCode;
}

function describe(code: number, seen: Seen, happened: Happened): string {
  const where = `revision ${seen.revision} of packet ${seen.packetId}`;
  if (code === WAIT_EXIT.answered) {
    const who = [...new Set(happened.answers.map((entry) => entry.by))].join(", ");
    return `answered by ${who}: ${happened.answers.length} answer${happened.answers.length === 1 ? "" : "s"} (${where})`;
  }
  const decision = happened.decision!;
  return `${decision.kind} by ${decision.by} at ${decision.at} (${where})`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How a wait ended: what happened (with the packet that shows it), a timeout, or an error. */
export type WaitResult =
  | { kind: "acted"; code: number; seen: Seen; happened: Happened; description: string }
  | { kind: "timedOut"; revision: number | null }
  | { kind: "error"; message: string };

export interface WaitRequest {
  for: WaitFor;
  timeoutMs: number;
  /** Count what happened after this human revision (default: the current one). */
  after?: number;
  /** Progress lines (reconnecting, waiting on a newer packet). */
  say: (text: string) => void;
  /** Ends the wait early (an MCP client cancelled the call or went away): answered as an error. */
  signal?: AbortSignal;
}

/**
 * The waiting loop of `baton wait`, shared with the MCP server's `wait_for_decision`
 * (cli/mcp/tools.ts): one place decides what counts and how failures are retried.
 */
export async function waitForAction(target: PushTarget, thread: string, request: WaitRequest): Promise<WaitResult> {
  const deadline = Date.now() + request.timeoutMs;
  const { say, signal } = request;
  const cancelled = { kind: "error", message: "the wait was cancelled" } as const;
  let failures = 0;
  let lastFailure = "";

  /** After a failure: wait (growing) unless the deadline comes first; false when it did. */
  const backOff = async (message: string): Promise<boolean> => {
    if (message !== lastFailure) say(`${message}; retrying until the timeout`);
    lastFailure = message;
    const delays = waitTuning.retryDelaysMs;
    const delay = Math.min(delays[Math.min(failures, delays.length - 1)]!, deadline - Date.now());
    failures++;
    if (delay <= 0) return false;
    await sleep(delay);
    return Date.now() < deadline;
  };
  const recovered = () => {
    if (failures) say(`reconnected to ${target.url}`);
    failures = 0;
    lastFailure = "";
  };

  // Where to start from: the state now (the NEXT action counts), or revision `after` of it.
  let start: Seen | null = null;
  while (!start) {
    const read = await readHandoff(target, thread, undefined, signal);
    if (signal?.aborted) return cancelled;
    if (read.kind === "fatal") return { kind: "error", message: read.message };
    if (read.kind === "packet") start = read.seen;
    else if (!(await backOff(read.kind === "retry" ? read.message : "no packet yet"))) return { kind: "timedOut", revision: null };
  }
  recovered();
  const after = request.after ?? start.revision;
  // Revision 0 is always the empty section; the one read now is known too.
  const knownSection = after === start.revision ? start.section : after === 0 ? emptyHumanSection() : null;
  let baseline: Baseline = { packetId: start.packetId, revision: after, section: knownSection };
  let last: { packetId: string; revision: number } = { packetId: start.packetId, revision: after };
  say(`waiting for ${request.for === "any" ? "a person to act" : request.for === "decision" ? "a decision" : "answers"} on ${thread} (packet ${start.packetId}, after revision ${after})`);

  let latest: Seen | null = start;
  for (;;) {
    if (latest) {
      if (latest.packetId !== baseline.packetId) {
        // A newer packet replaced the one waited on: people now act on that one, from its revision 0.
        say(`a newer packet (${latest.packetId}) is now active on ${thread}; waiting on it`);
        baseline = { packetId: latest.packetId, revision: 0, section: emptyHumanSection() };
      }
      const happened = whatHappened(baseline, latest);
      const code = outcomeFor(request.for, happened);
      if (code !== null) return { kind: "acted", code, seen: latest, happened, description: describe(code, latest, happened) };
      last = { packetId: latest.packetId, revision: latest.revision };
      latest = null;
    }
    const remainingMs = deadline - Date.now();
    if (remainingMs <= 0) return { kind: "timedOut", revision: last.revision };
    const seconds = Math.max(0.001, Math.min(waitTuning.requestSeconds, remainingMs / 1000));
    const read = await readHandoff(target, thread, { seconds, after: last.revision, afterPacket: last.packetId }, signal);
    if (signal?.aborted) return cancelled;
    if (read.kind === "fatal") return { kind: "error", message: read.message };
    if (read.kind === "retry") {
      if (!(await backOff(read.message))) return { kind: "timedOut", revision: last.revision };
      continue;
    }
    recovered();
    if (read.kind === "packet") latest = read.seen;
  }
}
