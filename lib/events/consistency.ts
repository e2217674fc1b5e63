import "server-only";
import Database from "better-sqlite3";
import { z } from "zod";
import { isNewer, type OrderKey } from "../ingest/ordering";

/**
 * A read-only check that the stored ledger holds together, for the crash-safety spec and
 * `baton ledger check` (what it checks: docs/decisions/002-immutable-versions-and-ledger.md).
 */

export type ProblemKind =
  | "integrity"
  | "foreign_key"
  | "version_without_event"
  | "version_with_several_events"
  | "event_without_version"
  | "event_on_another_thread"
  | "child_rows"
  | "child_on_another_thread"
  | "orphan_child"
  | "thread_without_versions"
  | "active_version"
  | "active_not_newest"
  | "ledger_disagrees"
  | "idempotency_without_version";

export interface ConsistencyProblem {
  kind: ProblemKind;
  detail: string;
}

export interface ConsistencyReport {
  ok: boolean;
  integrity: string;
  counts: { threads: number; versions: number; ledgerEvents: number; risks: number; questions: number; failedAttempts: number };
  /** Versions with failed attempts but no FailedAttempt rows at all: stored before the lessons view, until its backfill runs. */
  versionsAwaitingFailedAttempts: number;
  /** Every problem counted; the first MAX_LISTED described. */
  problemCount: number;
  problems: ConsistencyProblem[];
}

const MAX_LISTED = 50;

// What the check needs of a version's canonical form (lib/contract/canonical.ts).
const canonicalCounts = z.object({
  open_risks: z.array(z.unknown()).nullish(),
  questions_for_human: z.array(z.unknown()).nullish(),
  failed_attempts: z.array(z.unknown()).nullish(),
});
const packetReceivedData = z.object({ superseded_on_arrival: z.boolean().optional() });

interface VersionRow {
  id: string;
  threadId: string;
  sortAt: string;
  receivedAt: string;
  arrivalSeq: number | bigint | null;
  canonicalJson: string;
  questionCount: number | bigint;
  agent: string | null;
  project: string | null;
  branch: string | null;
  topic: string | null;
}

interface ThreadRow {
  id: string;
  key: string;
  archived: number | bigint;
  activeVersionId: string | null;
  activeSortAt: string | null;
  activeReceivedAt: string | null;
  agent: string | null;
  project: string | null;
  branch: string | null;
  topic: string | null;
}

interface EventRow {
  seq: number | bigint;
  kind: string;
  threadKey: string | null;
  versionId: string | null;
  data: string;
}

/** Per thread, what its ledger says, in sequence order. */
interface ThreadLedger {
  lastArrivedActive: string | null;
  arrivedActive: number;
  superseded: number;
  archived: boolean | null;
}

const time = (value: string | null) => (value === null ? NaN : Date.parse(value));
const num = (value: number | bigint) => Number(value);

class Problems {
  readonly listed: ConsistencyProblem[] = [];
  count = 0;
  add(kind: ProblemKind, detail: string): void {
    this.count++;
    if (this.listed.length < MAX_LISTED) this.listed.push({ kind, detail });
  }
}

/** Child rows per version: SELECT versionId, threadId, count(*) ... GROUP BY. */
function childCounts(db: Database.Database, table: "Risk" | "AgentQuestion" | "FailedAttempt"): Map<string, { threadIds: Set<string>; count: number }> {
  const rows = db
    .prepare(`SELECT "versionId" AS versionId, "threadId" AS threadId, count(*) AS n FROM "${table}" GROUP BY "versionId", "threadId"`)
    .all() as { versionId: string; threadId: string; n: number | bigint }[];
  const byVersion = new Map<string, { threadIds: Set<string>; count: number }>();
  for (const row of rows) {
    const entry = byVersion.get(row.versionId) ?? { threadIds: new Set<string>(), count: 0 };
    entry.threadIds.add(row.threadId);
    entry.count += num(row.n);
    byVersion.set(row.versionId, entry);
  }
  return byVersion;
}

/** Runs every check on an open connection, inside one read transaction (one snapshot). */
export function checkLedgerConsistency(db: Database.Database): ConsistencyReport {
  const problems = new Problems();
  db.exec("BEGIN");
  try {
    const integrityRows = db.prepare("PRAGMA integrity_check").all() as { integrity_check: string }[];
    const integrity = integrityRows.map((row) => row.integrity_check).join("; ");
    if (integrity !== "ok") problems.add("integrity", integrity);
    for (const row of db.prepare("PRAGMA foreign_key_check").all() as { table: string; rowid: number; parent: string }[]) {
      problems.add("foreign_key", `${row.table} row ${row.rowid} refers to a missing ${row.parent}`);
    }

    const threads = new Map<string, ThreadRow>();
    for (const row of db.prepare(`SELECT "id", "key", "archived", "activeVersionId", "activeSortAt", "activeReceivedAt", "agent", "project", "branch", "topic" FROM "Thread"`).iterate() as IterableIterator<ThreadRow>) {
      threads.set(row.id, row);
    }
    const threadIdByKey = new Map([...threads.values()].map((thread) => [thread.key, thread.id]));

    // The ledger, in order: which versions it announced, and what it says of each thread.
    const received = new Map<string, number>();
    const ledgers = new Map<string, ThreadLedger>();
    const eventsNamingVersions: { seq: number; kind: string; threadKey: string | null; versionId: string }[] = [];
    let ledgerEvents = 0;
    for (const event of db.prepare(`SELECT "seq", "kind", "threadKey", "versionId", "data" FROM "LedgerEvent" ORDER BY "seq"`).iterate() as IterableIterator<EventRow>) {
      ledgerEvents++;
      if (event.versionId) eventsNamingVersions.push({ seq: num(event.seq), kind: event.kind, threadKey: event.threadKey, versionId: event.versionId });
      if (!event.threadKey) continue;
      const ledger = ledgers.get(event.threadKey) ?? { lastArrivedActive: null, arrivedActive: 0, superseded: 0, archived: null };
      ledgers.set(event.threadKey, ledger);
      if (event.kind === "packet_received" && event.versionId) {
        received.set(event.versionId, (received.get(event.versionId) ?? 0) + 1);
        const data = packetReceivedData.safeParse(JSON.parse(event.data));
        if (data.success && !data.data.superseded_on_arrival) {
          ledger.lastArrivedActive = event.versionId;
          ledger.arrivedActive++;
        }
      } else if (event.kind === "packet_superseded") {
        ledger.superseded++;
      } else if (event.kind === "thread_archived") {
        ledger.archived = true;
      } else if (event.kind === "thread_reopened") {
        ledger.archived = false;
      }
    }

    const risks = childCounts(db, "Risk");
    const questions = childCounts(db, "AgentQuestion");
    const failed = childCounts(db, "FailedAttempt");
    const versionThread = new Map<string, string>();
    const newest = new Map<string, OrderKey>();
    let versionsAwaitingFailedAttempts = 0;
    const expectChildren = (version: VersionRow, what: string, found: { threadIds: Set<string>; count: number } | undefined, expected: number) => {
      const count = found?.count ?? 0;
      if (count !== expected) problems.add("child_rows", `version ${version.id} has ${count} ${what} rows, its packet ${expected}`);
      if (found && [...found.threadIds].some((threadId) => threadId !== version.threadId)) {
        problems.add("child_on_another_thread", `a ${what} row of version ${version.id} names another thread than the version's`);
      }
    };
    for (const version of db.prepare(`SELECT "id", "threadId", "sortAt", "receivedAt", "arrivalSeq", "canonicalJson", "questionCount", "agent", "project", "branch", "topic" FROM "PacketVersion"`).iterate() as IterableIterator<VersionRow>) {
      versionThread.set(version.id, version.threadId);
      const announced = received.get(version.id) ?? 0;
      if (announced === 0) problems.add("version_without_event", `version ${version.id} has no packet_received event`);
      if (announced > 1) problems.add("version_with_several_events", `version ${version.id} has ${announced} packet_received events`);

      const canonical = canonicalCounts.safeParse(JSON.parse(version.canonicalJson));
      const expected = canonical.success ? canonical.data : {};
      expectChildren(version, "Risk", risks.get(version.id), expected.open_risks?.length ?? 0);
      const questionRows = questions.get(version.id);
      expectChildren(version, "AgentQuestion", questionRows, expected.questions_for_human?.length ?? 0);
      if (num(version.questionCount) !== (questionRows?.count ?? 0)) {
        problems.add("child_rows", `version ${version.id} says questionCount ${version.questionCount}, has ${questionRows?.count ?? 0} AgentQuestion rows`);
      }
      const failedExpected = expected.failed_attempts?.length ?? 0;
      if (failedExpected > 0 && !failed.has(version.id)) versionsAwaitingFailedAttempts++;
      else expectChildren(version, "FailedAttempt", failed.get(version.id), failedExpected);

      const candidate = {
        id: version.id,
        sortAt: new Date(version.sortAt),
        receivedAt: new Date(version.receivedAt),
        arrivalSeq: version.arrivalSeq === null ? null : Number(version.arrivalSeq),
      };
      const current = newest.get(version.threadId);
      if (!current || isNewer(candidate, current)) newest.set(version.threadId, candidate);
    }

    for (const [table, rows] of [["Risk", risks], ["AgentQuestion", questions], ["FailedAttempt", failed]] as const) {
      for (const versionId of rows.keys()) {
        if (!versionThread.has(versionId)) problems.add("orphan_child", `${table} rows name version ${versionId}, which is not stored`);
      }
    }
    for (const event of eventsNamingVersions) {
      const threadId = versionThread.get(event.versionId);
      if (threadId === undefined) {
        problems.add("event_without_version", `ledger event ${event.seq} (${event.kind}) names version ${event.versionId}, which is not stored`);
      } else if (event.threadKey !== null && threadIdByKey.get(event.threadKey) !== threadId) {
        problems.add("event_on_another_thread", `ledger event ${event.seq} (${event.kind}) names thread ${event.threadKey}, its version belongs to another`);
      }
    }

    for (const thread of threads.values()) {
      const top = newest.get(thread.id);
      if (!top) {
        problems.add("thread_without_versions", `thread ${thread.key} has no versions`);
        continue;
      }
      if (thread.activeVersionId !== top.id) {
        problems.add("active_not_newest", `thread ${thread.key}: active version ${thread.activeVersionId ?? "none"}, newest ${top.id}`);
      } else {
        const active = db.prepare(`SELECT "agent", "project", "branch", "topic" FROM "PacketVersion" WHERE "id" = ?`).get(top.id) as Pick<VersionRow, "agent" | "project" | "branch" | "topic">;
        const keyDiffers = time(thread.activeSortAt) !== top.sortAt.getTime() || time(thread.activeReceivedAt) !== top.receivedAt.getTime();
        const labelsDiffer = (["agent", "project", "branch", "topic"] as const).some((field) => thread[field] !== active[field]);
        if (keyDiffers || labelsDiffer) problems.add("active_version", `thread ${thread.key}: its copy of the active version's ${keyDiffers ? "ordering key" : "labels"} differs`);
      }
      const ledger = ledgers.get(thread.key);
      if (!ledger || ledger.lastArrivedActive !== thread.activeVersionId) {
        problems.add("ledger_disagrees", `thread ${thread.key}: the ledger's last active arrival is ${ledger?.lastArrivedActive ?? "none"}, the thread's active version ${thread.activeVersionId ?? "none"}`);
      } else if (ledger.superseded !== ledger.arrivedActive - 1) {
        problems.add("ledger_disagrees", `thread ${thread.key}: ${ledger.arrivedActive} active arrivals but ${ledger.superseded} packet_superseded events`);
      }
      if (ledger && (ledger.archived ?? false) !== Boolean(num(thread.archived))) {
        problems.add("ledger_disagrees", `thread ${thread.key}: archived is ${Boolean(num(thread.archived))}, its ledger says ${ledger.archived ?? false}`);
      }
    }

    for (const row of db.prepare(`SELECT "tokenId", "key", "packetId" FROM "IdempotencyRecord" WHERE "packetId" IS NOT NULL`).iterate() as IterableIterator<{ key: string; packetId: string }>) {
      if (!versionThread.has(row.packetId)) problems.add("idempotency_without_version", `Idempotency-Key ${row.key} names version ${row.packetId}, which is not stored`);
    }

    const countOf = (table: string) => num((db.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number | bigint }).n);
    return {
      ok: problems.count === 0,
      integrity,
      counts: {
        threads: threads.size,
        versions: versionThread.size,
        ledgerEvents,
        risks: countOf("Risk"),
        questions: countOf("AgentQuestion"),
        failedAttempts: countOf("FailedAttempt"),
      },
      versionsAwaitingFailedAttempts,
      problemCount: problems.count,
      problems: problems.listed,
    };
  } finally {
    db.exec("COMMIT");
  }
}

/** Opens the SQLite file read-only (a running server may keep writing) and checks it. */
export function checkDatabaseFile(file: string): ConsistencyReport {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return checkLedgerConsistency(db);
  } finally {
    db.close();
  }
}
