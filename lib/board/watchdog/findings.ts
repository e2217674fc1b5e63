import "server-only";
import { inTransaction, sqlExecutor } from "../../db/client";
import { Prisma } from "../../generated/prisma/client";
import { inChunks } from "../../db/sql";
import { announceLedger } from "../../events/bus";
import { appendLedgerEvents, type LedgerKind } from "../../events/ledger";
import type { Flag } from "../../contract/lint";
import { findCommitRegressions, freshRegressionCache } from "./commit-history";

/**
 * The watchdog's findings across threads and versions, `duplicate_topic` and
 * `commit_regressed`, recorded once per active version (docs/decisions/017-watchdog.md).
 */

export type FindingCode = "duplicate_topic" | "commit_regressed";

export const FINDING_EVENT_KINDS: Record<FindingCode, LedgerKind> = {
  duplicate_topic: "watchdog_duplicate_topic",
  commit_regressed: "watchdog_commit_regressed",
};

export interface WatchdogFinding {
  code: FindingCode;
  threadKey: string;
  /** The active version it is about: a newer packet is a new finding. */
  versionId: string;
  /** In words, for the card. */
  reason: string;
  /** For the ledger event. */
  data: Record<string, unknown>;
}

export interface ActiveThreadRow {
  id: string;
  key: string;
  project: string | null;
  branch: string | null;
  topic: string | null;
  taskId: string | null;
  activeVersionId: string;
}

const ACTIVE_THREAD_COLUMNS = Prisma.sql`t."id", t."key", t."project", t."branch", t."topic", v."taskId", t."activeVersionId"
  FROM "Thread" t JOIN "PacketVersion" v ON v."id" = t."activeVersionId" WHERE t."archived" = FALSE`;

/** Every active thread with what the checks compare: one statement, active threads only. */
async function readActiveThreads(): Promise<ActiveThreadRow[]> {
  const sql = await sqlExecutor();
  return sql.query<ActiveThreadRow>(Prisma.sql`SELECT ${ACTIVE_THREAD_COLUMNS}`);
}

/**
 * The active threads among `keys`, and every active thread of the same project and
 * branch (all a duplicate topic can involve): one card's findings without reading the board.
 * One statement per chunk of keys: the asked threads on the key's index, their peers on the
 * (project, branch) index, whatever the number of archived threads.
 */
export async function readActiveThreadsAround(keys: readonly string[]): Promise<ActiveThreadRow[]> {
  const sql = await sqlExecutor();
  const found = await inChunks([...new Set(keys)], (chunk) =>
    sql.query<ActiveThreadRow>(
      Prisma.sql`SELECT ${ACTIVE_THREAD_COLUMNS} AND t."key" IN (${Prisma.join(chunk)})
        UNION SELECT t."id", t."key", t."project", t."branch", t."topic", v."taskId", t."activeVersionId"
        FROM "Thread" a
        JOIN "Thread" t ON t."project" = a."project" AND t."branch" = a."branch"
        JOIN "PacketVersion" v ON v."id" = t."activeVersionId"
        WHERE a."key" IN (${Prisma.join(chunk)}) AND a."archived" = FALSE AND a."activeVersionId" IS NOT NULL AND t."archived" = FALSE`,
    ),
  );
  const byKey = new Map(found.map((thread) => [thread.key, thread]));
  return [...byKey.values()];
}

const quote = (text: string) => `"${text}"`;
const OTHERS_NAMED = 3;

function listOthers(keys: string[]): string {
  const named = keys.slice(0, OTHERS_NAMED).join(", ");
  return keys.length > OTHERS_NAMED ? `${named} and ${keys.length - OTHERS_NAMED} more` : named;
}

interface Sharing {
  thread: ActiveThreadRow;
  others: Set<string>;
  topic: string | null;
  taskId: string | null;
}

/**
 * Threads of the same project and branch that share a topic or a task_id. Both
 * project and branch must be known: a bare branch name ("main") says nothing
 * about which repository it is in.
 */
export function findDuplicateTopics(threads: readonly ActiveThreadRow[]): WatchdogFinding[] {
  const groups = new Map<string, { by: "topic" | "task"; members: ActiveThreadRow[] }>();
  const join = (by: "topic" | "task", value: string, thread: ActiveThreadRow) => {
    const id = JSON.stringify([by, thread.project, thread.branch, value]);
    const group = groups.get(id) ?? { by, members: [] };
    group.members.push(thread);
    groups.set(id, group);
  };
  for (const thread of threads) {
    if (!thread.project || !thread.branch) continue;
    if (thread.topic) join("topic", thread.topic, thread);
    if (thread.taskId) join("task", thread.taskId, thread);
  }
  const sharing = new Map<string, Sharing>();
  for (const { by, members } of groups.values()) {
    if (members.length < 2) continue;
    for (const thread of members) {
      const entry = sharing.get(thread.key) ?? { thread, others: new Set<string>(), topic: null, taskId: null };
      for (const other of members) if (other.key !== thread.key) entry.others.add(other.key);
      if (by === "topic") entry.topic = thread.topic;
      else entry.taskId = thread.taskId;
      sharing.set(thread.key, entry);
    }
  }
  return [...sharing.values()]
    .sort((a, b) => a.thread.key.localeCompare(b.thread.key))
    .map(({ thread, others, topic, taskId }) => {
      const otherKeys = [...others].sort();
      const what = [topic ? `topic ${quote(topic)}` : null, taskId ? `task ${quote(taskId)}` : null].filter(Boolean).join(" and ");
      return {
        code: "duplicate_topic" as const,
        threadKey: thread.key,
        versionId: thread.activeVersionId,
        reason: `${otherKeys.length === 1 ? "Another active thread works" : `${otherKeys.length} other active threads work`} on the same ${what} on ${thread.project} branch ${thread.branch}: ${listOthers(otherKeys)}.`,
        data: { project: thread.project, branch: thread.branch, topic, task_id: taskId, other_threads: otherKeys },
      };
    });
}

/**
 * Every finding about the active threads, now; with `keys`, the findings about
 * those threads only (read with their project/branch peers, not the whole board). `around`:
 * the threads the check covers when the caller has read them, readActiveThreadsAround(keys)
 * or, without keys, every active thread (the whole board's cards).
 */
export async function findWatchdogFindings(keys?: readonly string[], around?: readonly ActiveThreadRow[]): Promise<WatchdogFinding[]> {
  // The threads and the commit cache's freshness are read at once: a round trip fewer on every card's answer.
  const [threads, cache] = await Promise.all([
    around ?? (keys ? readActiveThreadsAround(keys) : readActiveThreads()),
    freshRegressionCache(),
  ]);
  const asked = keys ? new Set(keys) : null;
  const judged = asked ? threads.filter((thread) => asked.has(thread.key)) : threads;
  const findings = findDuplicateTopics(threads).filter((finding) => !asked || asked.has(finding.threadKey));
  const regressions = await findCommitRegressions(judged, cache, { all: !asked });
  for (const thread of judged) {
    const regression = regressions.get(thread.key);
    if (!regression) continue;
    findings.push({
      code: "commit_regressed",
      threadKey: thread.key,
      versionId: thread.activeVersionId,
      reason: `last_known_good_commit ${regression.commit} is older than ${regression.newer}, which an earlier packet of this thread reported: the work may have gone back.`,
      data: { commit: regression.commit, newer_commit: regression.newer, newer_packet_id: regression.newerVersionId },
    });
  }
  return findings;
}

/** The findings as card flags, by thread key: one call per board load (`keys`: only those cards'; `around` as findWatchdogFindings). */
export async function loadWatchdogFlags(keys?: readonly string[], around?: readonly ActiveThreadRow[]): Promise<Map<string, Flag[]>> {
  const flags = new Map<string, Flag[]>();
  for (const finding of await findWatchdogFindings(keys, around)) {
    flags.set(finding.threadKey, [...(flags.get(finding.threadKey) ?? []), { code: finding.code, reason: finding.reason }]);
  }
  return flags;
}

/**
 * Records each finding not yet in the ledger for the same thread, kind and
 * active version, in one transaction (the ledger is the memory: nothing else
 * is stored). Returns the findings it recorded.
 */
export async function recordWatchdogFindings(now: Date = new Date()): Promise<WatchdogFinding[]> {
  const findings = await findWatchdogFindings();
  if (!findings.length) return [];
  const keys = [...new Set(findings.map((finding) => finding.threadKey))];
  const kinds = Object.values(FINDING_EVENT_KINDS);
  const recorded = await inTransaction(async (tx) => {
    const sql = await sqlExecutor(tx);
    const active = await inChunks(keys, (chunk) =>
      sql.query<{ key: string; activeVersionId: string | null }>(
        Prisma.sql`SELECT "key", "activeVersionId" FROM "Thread" WHERE "archived" = FALSE AND "key" IN (${Prisma.join(chunk)})`,
      ),
    );
    const seen = await inChunks(keys, (chunk) =>
      sql.query<{ threadKey: string; versionId: string | null; kind: string }>(
        Prisma.sql`SELECT "threadKey", "versionId", "kind" FROM "LedgerEvent"
          WHERE "kind" IN (${Prisma.join(kinds)}) AND "threadKey" IN (${Prisma.join(chunk)})`,
      ),
    );
    const activeVersion = new Map(active.map((row) => [row.key, row.activeVersionId]));
    const already = new Set(seen.map((row) => `${row.kind}\n${row.threadKey}\n${row.versionId}`));
    // A packet that arrived since the finding was made is a new version: judged at the next check.
    const fresh = findings.filter(
      (finding) =>
        activeVersion.get(finding.threadKey) === finding.versionId &&
        !already.has(`${FINDING_EVENT_KINDS[finding.code]}\n${finding.threadKey}\n${finding.versionId}`),
    );
    await appendLedgerEvents(
      tx,
      fresh.map((finding) => ({
        kind: FINDING_EVENT_KINDS[finding.code],
        threadKey: finding.threadKey,
        versionId: finding.versionId,
        actor: "watchdog",
        data: { ...finding.data, reason: finding.reason },
      })),
      now,
    );
    return fresh;
  });
  if (recorded.length) announceLedger();
  return recorded;
}
