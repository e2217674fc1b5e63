import { packetFactory } from "./packets";

/**
 * Packets for a board: `threads` threads with explicit thread keys, each a kind
 * that decides its column (needs you for four different reasons, ready, stale),
 * built on packets.ts's realistic packets (about 2 KB each here, a one-paragraph
 * summary) with the severities, questions, clean-state problems, verdicts and
 * times that the kind needs.
 *
 * Versions of a thread are numbered by `index`: 0 .. versions-1 are the first
 * seeding, index versions-1 the newest (the active one); every index from
 * `versions` on is older than all of those ("history"), the older the larger the
 * index. So seeding more history never changes a thread's active version or card.
 */

/** The JSON text size packets.ts pads to, before the board fields are added. */
export const BASE_PACKET_BYTES = 2048;
/** Between two versions of a thread (producer clock). */
export const VERSION_STEP_MS = 10 * 60_000;
/** Between the newest versions of consecutive threads, so that their cards sort apart. */
const THREAD_SPACING_MS = 2_000;
/** Age of the newest version of a live thread, and of a stale one (BATON_STALE_HOURS is 24 by default). */
const FRESH_AGE_MS = 2 * 60_000;
export const STALE_AGE_MS = 30 * 3_600_000;
/** How long after the producer's created_at Baton receives a packet. */
const ARRIVAL_DELAY_MS = 1_500;

export const THREAD_KINDS = ["severe_risk", "questions", "dirty_state", "verdict_failed", "ready", "stale"] as const;
export type ThreadKind = (typeof THREAD_KINDS)[number];
/** Thread `t` is of kind KIND_CYCLE[t % 10]: 40 % need a person, 40 % ready, 20 % stale. */
const KIND_CYCLE: readonly ThreadKind[] = [
  "severe_risk", "questions", "dirty_state", "verdict_failed", "ready", "ready", "ready", "ready", "stale", "stale",
];
export const threadKind = (thread: number): ThreadKind => KIND_CYCLE[thread % KIND_CYCLE.length]!;

/** The board column each kind must land in (lib/board/columns.ts), with no people and no heartbeats. */
export const KIND_COLUMN: Record<ThreadKind, "needs_you" | "ready" | "stale"> = {
  severe_risk: "needs_you",
  questions: "needs_you",
  dirty_state: "needs_you",
  verdict_failed: "needs_you",
  ready: "ready",
  stale: "stale",
};

/** Cards expected per board column for `threads` threads. */
export function expectedColumnCounts(threads: number): Record<string, number> {
  const counts: Record<string, number> = { running: 0, needs_you: 0, ready: 0, intervened: 0, approved: 0, stale: 0 };
  for (let thread = 0; thread < threads; thread++) counts[KIND_COLUMN[threadKind(thread)]]!++;
  return counts;
}

const PROJECTS = [
  "acme/payments", "acme/web", "acme/platform", "acme/mobile", "acme/data",
  "acme/search", "acme/identity", "acme/notifications", "acme/analytics", "acme/docs",
] as const;
const ROLES = ["builder", "fixer", "reviewer", "migrator"] as const;
// Words that normalise to medium, low or info only: these threads must not need a person for their risks.
const MILD_WORDS = ["medium", "warn", "p2", "low", "minor", "p3", "info", "note"] as const;
const SEVERE_WORDS = ["high", "critical", "p1", "blocker"] as const;

const pick = <T>(items: readonly T[], index: number): T => items[index % items.length]!;

export interface BoardPlan {
  runId: string;
  threads: number;
  /** Versions in the first seeding (the newest ones). */
  versions: number;
  /** The clock every time is measured back from (the run's start). */
  nowMs: number;
}

export interface BoardPacket {
  body: Record<string, unknown>;
  receivedAt: Date;
}

/** The producer time of version `index` of `thread` (see the file comment for the numbering). */
export function createdAtMs(plan: BoardPlan, thread: number, index: number): number {
  const newest = plan.nowMs - (threadKind(thread) === "stale" ? STALE_AGE_MS : FRESH_AGE_MS) - thread * THREAD_SPACING_MS;
  const stepsBack = index < plan.versions ? plan.versions - 1 - index : index;
  return newest - stepsBack * VERSION_STEP_MS;
}

export function boardPackets(plan: BoardPlan): { packet(thread: number, index: number): BoardPacket } {
  const factory = packetFactory(plan.runId, plan.threads, plan.nowMs);
  return {
    packet(thread, index) {
      // packets.ts puts packet `seq` in thread `seq % threads`: its thread-level details stay per thread.
      const seq = index * plan.threads + thread;
      const body = JSON.parse(factory.body(seq, BASE_PACKET_BYTES)) as Record<string, unknown>;
      const kind = threadKind(thread);
      const project = pick(PROJECTS, Math.floor(thread / 7));
      const short = project.split("/")[1]!;
      const task = body.task_id as string;
      const created = createdAtMs(plan, thread, index);
      delete body.questions_for_human;
      const risks = body.open_risks as { severity: string }[];
      risks.forEach((risk, position) => {
        risk.severity = kind === "severe_risk" && position === 0 ? pick(SEVERE_WORDS, Math.floor(thread / 10)) : pick(MILD_WORDS, seq + position * 3);
      });
      Object.assign(body, {
        thread: `${project}/${task}`,
        project,
        agent: { name: `${short}-${pick(ROLES, thread)}-${(thread % 3) + 1}`, kind: "claude-code", model: "opus" },
        branch: `feat/${short}-${thread % 25}`,
        created_at: new Date(created).toISOString(),
      });
      if (kind === "questions") {
        body.questions_for_human = [
          { id: "q1", question: `Keep the old endpoint for ${task} until the clients have moved?`, options: ["keep", "remove"], blocking: thread % 20 === 1 },
        ];
      }
      if (kind === "dirty_state") {
        body.clean_state = [
          { check: "git status", detail: `${2 + (seq % 5)} untracked files under tmp/` },
          { check: "processes", detail: "a dev server is still listening on port 5173" },
        ];
      }
      if (kind === "verdict_failed") body.verdict = { passed: false, review_total: 5 + (thread % 2), review_verdict: "soft_fail" };
      return { body, receivedAt: new Date(created + ARRIVAL_DELAY_MS) };
    },
  };
}

/** What the seeding script is asked to do: versions `from` (inclusive) to `to` (exclusive) of every thread. */
export interface SeedRequest {
  plan: BoardPlan;
  from: number;
  to: number;
  /** Packets submitted together (Promise.all); the writer shares commits among them. */
  chunk: number;
}

/** Starts the last stdout line of the seeding script, before its SeedSummary JSON. */
export const SEED_RESULT_PREFIX = "SEED_RESULT ";

export interface SeedSummary {
  packets: number;
  stored: number;
  duplicates: number;
  /** Stored packets that became their thread's active version on arrival, and older ones stored superseded. */
  activeOnArrival: number;
  supersededOnArrival: number;
  failed: number;
  failureSamples: string[];
  seconds: number;
  /** Mean JSON size of the packets, from a sample. */
  meanBytes: number;
  /** Commits the ingest writer made (batches) in the seeding process. */
  commits: number;
}
