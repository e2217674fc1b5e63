import "server-only";
import { sqlExecutor, type SqlExecutor, type Tx } from "../db";
import { BatonError } from "../errors";
import { Prisma } from "../generated/prisma/client";
import { newId } from "../ids";
import type { Flag } from "../packet/lint";
import { appendLedgerEvents, type NewLedgerEvent } from "../ledger/events";
import { FAILED_ATTEMPT_COLUMNS, failedAttemptRows } from "../lessons/failed-attempts";
import { isNewer, sortTimeFor } from "./ordering";
import { inChunks, insertRows, updateOnConflict } from "../sql";
import type { IngestResult, PendingPacket } from "./types";

/** A thread as the batch sees it: read once, then changed in memory, written once. */
interface ThreadState {
  id: string;
  key: string;
  isNew: boolean;
  changed: boolean;
  archived: boolean;
  activeVersionId: string | null;
  activeSortAt: Date | null;
  activeReceivedAt: Date | null;
  activeArrivalSeq: number | null;
  createdAt: Date;
  updatedAt: Date;
  agent: string | null;
  project: string | null;
  branch: string | null;
  topic: string | null;
}

interface StoredVersion {
  id: string;
  threadKey: string;
  flags: Flag[];
}

const asDate = (value: string | Date | null) => (value === null ? null : value instanceof Date ? value : new Date(value));

const VERSION_COLUMNS = [
  "id", "threadId", "contentHash", "receivedJson", "canonicalJson", "source", "sourcePath", "workspaceRoot",
  "producerCreatedAt", "receivedAt", "sortAt", "arrivalSeq", "flags", "nextAction", "highestSeverity", "riskCounts",
  "questionCount", "summary", "agent", "project", "branch", "topic", "taskId", "sessionId",
] as const;
const RISK_COLUMNS = ["id", "versionId", "threadId", "position", "riskId", "severity", "severityRaw", "detail", "mitigation", "fingerprint"] as const;
const QUESTION_COLUMNS = ["id", "versionId", "threadId", "position", "questionId", "question", "context", "options", "blocking"] as const;
const THREAD_COLUMNS = [
  "id", "key", "archived", "activeVersionId", "activeSortAt", "activeReceivedAt", "activeArrivalSeq", "agent", "project", "branch", "topic",
  "createdAt", "updatedAt",
] as const;
const THREAD_UPDATED_COLUMNS = THREAD_COLUMNS.filter((column) => column !== "id" && column !== "key" && column !== "createdAt");

async function readExistingVersions(sql: SqlExecutor, hashes: string[]): Promise<Map<string, StoredVersion>> {
  if (!hashes.length) return new Map();
  const rows = await inChunks(hashes, (chunk) =>
    sql.query<{ id: string; flags: string; contentHash: string; threadKey: string }>(Prisma.sql`
      SELECT v."id", v."flags", v."contentHash", t."key" AS "threadKey"
      FROM "PacketVersion" v JOIN "Thread" t ON t."id" = v."threadId"
      WHERE v."contentHash" IN (${Prisma.join(chunk)})`),
  );
  return new Map(rows.map((row) => [row.contentHash, { id: row.id, threadKey: row.threadKey, flags: JSON.parse(row.flags) as Flag[] }]));
}

async function readThreads(sql: SqlExecutor, keys: string[]): Promise<Map<string, ThreadState>> {
  if (!keys.length) return new Map();
  const rows = await inChunks(keys, (chunk) => sql.query<
    {
      id: string;
      key: string;
      archived: boolean | number | bigint;
      activeVersionId: string | null;
      activeSortAt: string | Date | null;
      activeReceivedAt: string | Date | null;
      activeArrivalSeq: number | bigint | null;
      createdAt: string | Date;
      updatedAt: string | Date;
      agent: string | null;
      project: string | null;
      branch: string | null;
      topic: string | null;
    }
  >(Prisma.sql`SELECT ${Prisma.raw(THREAD_COLUMNS.map((column) => `"${column}"`).join(", "))} FROM "Thread" WHERE "key" IN (${Prisma.join(chunk)})`));
  return new Map(
    rows.map((row) => [
      row.key,
      {
        ...row,
        isNew: false,
        changed: false,
        archived: Boolean(Number(row.archived)),
        activeSortAt: asDate(row.activeSortAt),
        activeReceivedAt: asDate(row.activeReceivedAt),
        activeArrivalSeq: row.activeArrivalSeq === null ? null : Number(row.activeArrivalSeq),
        createdAt: asDate(row.createdAt)!,
        updatedAt: asDate(row.updatedAt)!,
      },
    ]),
  );
}

/**
 * The last arrival sequence given. Writers take turns (one SQLite writer; on PostgreSQL
 * every write transaction first takes one advisory lock), so the next is this plus one,
 * in one process and across instances; the unique index refuses a duplicate anyway.
 */
async function lastArrivalSeq(sql: SqlExecutor): Promise<number> {
  const [row] = await sql.query<{ seq: number | bigint | null }>(Prisma.sql`SELECT MAX("arrivalSeq") AS "seq" FROM "PacketVersion"`);
  return Number(row?.seq ?? 0);
}

const keyReused = (key: string) =>
  new BatonError("idempotency_key_reused", "This Idempotency-Key was already used with a different body; use a new key for new content.", {
    idempotency_key: key,
  });

/**
 * Idempotency-Key checks, against stored keys and earlier items of the batch:
 * another body is refused; the same body goes on (its content is then a
 * duplicate) without recording the key again. Returns the items whose key is new.
 */
async function checkKeys(
  tx: Tx,
  items: readonly PendingPacket[],
  results: (IngestResult | BatonError | undefined)[],
): Promise<Set<number>> {
  const newKeys = new Set<number>();
  const inBatch = new Map<string, string>();
  for (const [index, item] of items.entries()) {
    const idempotency = item.source.idempotency;
    if (!idempotency) continue;
    const id = `${idempotency.tokenId}\u0000${idempotency.key}`;
    const record = inBatch.has(id)
      ? { bodyHash: inBatch.get(id)! }
      : await tx.idempotencyRecord.findUnique({ where: { tokenId_key: idempotency } });
    if (!record) {
      inBatch.set(id, item.bodyHash);
      newKeys.add(index);
    } else if (record.bodyHash !== item.bodyHash) {
      results[index] = keyReused(idempotency.key);
    }
  }
  return newKeys;
}

/**
 * Stores a batch of validated packets in the caller's transaction, in order, as
 * if one after another: dedupe by content hash, find or create each thread,
 * supersede by the contract's ordering, record ledger events. A few statements
 * serve the whole batch. Returns one result (or a per-item BatonError) per item.
 */
export async function storeBatch(
  tx: Tx,
  items: readonly PendingPacket[],
): Promise<{ results: (IngestResult | BatonError)[]; stored: number }> {
  const results: (IngestResult | BatonError | undefined)[] = new Array(items.length);
  const sql = await sqlExecutor(tx);
  const newKeys = await checkKeys(tx, items, results);
  const open = items.map((item, index) => ({ item, index })).filter(({ index }) => results[index] === undefined);
  const known = await readExistingVersions(sql, [...new Set(open.map(({ item }) => item.packet.contentHash))]);
  const threads = await readThreads(sql, [...new Set(open.map(({ item }) => item.packet.threadKey))]);
  let arrivalSeq = await lastArrivalSeq(sql);

  const versionRows: unknown[][] = [];
  const riskRows: unknown[][] = [];
  const questionRows: unknown[][] = [];
  const failedRows: unknown[][] = [];
  const events: NewLedgerEvent[] = [];
  const keyRows: unknown[][] = [];
  const pushEvent = (at: Date, event: NewLedgerEvent) => events.push({ ...event, at });

  for (const { item, index } of open) {
    const { packet, source, receivedAt } = item;
    const existing = known.get(packet.contentHash);
    let result: IngestResult;
    if (existing) {
      const thread = threads.get(existing.threadKey);
      result = {
        packet_id: existing.id,
        thread_key: existing.threadKey,
        flags: existing.flags,
        duplicate: true,
        active: thread ? thread.activeVersionId === existing.id : true,
      };
    } else {
      const versionId = newId("pv", receivedAt.getTime());
      const thread = threadFor(threads, packet.threadKey, receivedAt);
      arrivalSeq += 1;
      const becomesActive = planVersion(item, versionId, arrivalSeq, thread, pushEvent);
      collectRows(item, versionId, arrivalSeq, thread.id, versionRows, riskRows, questionRows);
      failedRows.push(...failedAttemptRows(packet.canonical.failed_attempts, { versionId, threadId: thread.id, receivedAt }));
      known.set(packet.contentHash, { id: versionId, threadKey: packet.threadKey, flags: packet.flags });
      result = { packet_id: versionId, thread_key: packet.threadKey, flags: packet.flags, duplicate: false, active: becomesActive };
    }
    if (source.idempotency && newKeys.has(index)) keyRows.push([source.idempotency.tokenId, source.idempotency.key, item.bodyHash, result.packet_id, receivedAt]);
    results[index] = result;
  }

  // Thread rows first (new ones without an active version), then what refers to them.
  const changed = [...threads.values()].filter((thread) => thread.changed);
  const threadRow = (thread: ThreadState, withActive: boolean) => [
    thread.id, thread.key, thread.archived, withActive ? thread.activeVersionId : null,
    withActive ? thread.activeSortAt : null, withActive ? thread.activeReceivedAt : null, withActive ? thread.activeArrivalSeq : null,
    thread.agent, thread.project, thread.branch, thread.topic, thread.createdAt, thread.updatedAt,
  ];
  await insertRows(sql, "Thread", THREAD_COLUMNS, changed.filter((t) => t.isNew).map((t) => threadRow(t, false)));
  await insertRows(sql, "PacketVersion", VERSION_COLUMNS, versionRows);
  await insertRows(sql, "Risk", RISK_COLUMNS, riskRows);
  await insertRows(sql, "AgentQuestion", QUESTION_COLUMNS, questionRows);
  await insertRows(sql, "FailedAttempt", FAILED_ATTEMPT_COLUMNS, failedRows);
  await insertRows(sql, "Thread", THREAD_COLUMNS, changed.map((t) => threadRow(t, true)), updateOnConflict("id", THREAD_UPDATED_COLUMNS));
  await appendLedgerEvents(tx, events, new Date());
  await insertRows(sql, "IdempotencyRecord", ["tokenId", "key", "bodyHash", "packetId", "createdAt"], keyRows);
  return { results: results as (IngestResult | BatonError)[], stored: versionRows.length };
}

function threadFor(threads: Map<string, ThreadState>, key: string, receivedAt: Date): ThreadState {
  let thread = threads.get(key);
  if (!thread) {
    thread = {
      id: newId("th", receivedAt.getTime()),
      key,
      isNew: true,
      changed: true,
      archived: false,
      activeVersionId: null,
      activeSortAt: null,
      activeReceivedAt: null,
      activeArrivalSeq: null,
      createdAt: receivedAt,
      updatedAt: receivedAt,
      agent: null,
      project: null,
      branch: null,
      topic: null,
    };
    threads.set(key, thread);
  }
  return thread;
}

/** Decides whether the new version becomes active, updates the thread in memory, and records events. */
function planVersion(
  item: PendingPacket,
  versionId: string,
  arrivalSeq: number,
  thread: ThreadState,
  pushEvent: (at: Date, event: NewLedgerEvent) => void,
): boolean {
  const { packet, source, receivedAt } = item;
  const { canonical } = packet;
  const sortAt = sortTimeFor(packet.createdAtMs, receivedAt);
  const becomesActive =
    !thread.activeVersionId ||
    !thread.activeSortAt ||
    !thread.activeReceivedAt ||
    isNewer(
      { sortAt, receivedAt, arrivalSeq, id: versionId },
      { sortAt: thread.activeSortAt, receivedAt: thread.activeReceivedAt, arrivalSeq: thread.activeArrivalSeq, id: thread.activeVersionId },
    );
  const wasArchived = thread.archived;
  const producerArchives = becomesActive && canonical.status === "archived";
  const previousActive = thread.activeVersionId;

  if (becomesActive) {
    Object.assign(thread, {
      changed: true,
      archived: producerArchives,
      activeVersionId: versionId,
      activeSortAt: sortAt,
      activeReceivedAt: receivedAt,
      activeArrivalSeq: arrivalSeq,
      updatedAt: receivedAt,
      agent: canonical.agent?.name ?? null,
      project: canonical.project ?? null,
      branch: canonical.branch ?? null,
      topic: canonical.topic ?? null,
    });
  } else if (wasArchived) {
    // A new packet re-opens an archived thread, whatever its age.
    Object.assign(thread, { changed: true, archived: false, updatedAt: receivedAt });
  }
  // Otherwise a late, older packet is history only: the card and its place on the board stay.

  const key = packet.threadKey;
  pushEvent(receivedAt, {
    kind: "packet_received",
    threadKey: key,
    versionId,
    actor: source.actor,
    data: {
      source: source.kind,
      ...(source.sourcePath ? { source_path: source.sourcePath } : {}),
      flags: packet.flags.map((flag) => flag.code),
      next_action: canonical.next_action?.text ?? null,
      highest_severity: packet.highestSeverity,
      superseded_on_arrival: !becomesActive,
      // Only when there were any (decision 020): how many secrets were redacted, and of what kinds.
      ...(packet.secretsRedacted.count ? { secrets_redacted: packet.secretsRedacted.count, secret_kinds: packet.secretsRedacted.kinds } : {}),
    },
  });
  if (becomesActive && previousActive) {
    pushEvent(receivedAt, { kind: "packet_superseded", threadKey: key, versionId: previousActive, actor: source.actor, data: { superseded_by: versionId } });
  }
  if (wasArchived && !producerArchives) {
    pushEvent(receivedAt, { kind: "thread_reopened", threadKey: key, versionId, actor: source.actor, data: {} });
  }
  if (producerArchives && !wasArchived) {
    pushEvent(receivedAt, {
      kind: "thread_archived",
      threadKey: key,
      versionId,
      actor: source.actor,
      data: { reason: "the producer marked the packet archived" },
    });
  }
  return becomesActive;
}

function collectRows(
  item: PendingPacket,
  versionId: string,
  arrivalSeq: number,
  threadId: string,
  versionRows: unknown[][],
  riskRows: unknown[][],
  questionRows: unknown[][],
): void {
  const { packet, source, receivedAt } = item;
  const { canonical } = packet;
  const at = receivedAt.getTime();
  versionRows.push([
    versionId, threadId, packet.contentHash, JSON.stringify(packet.received), JSON.stringify(canonical), source.kind,
    source.sourcePath ?? null, source.workspaceRoot ?? null,
    packet.createdAtMs === null ? null : new Date(packet.createdAtMs), receivedAt, sortTimeFor(packet.createdAtMs, receivedAt), arrivalSeq,
    JSON.stringify(packet.flags), canonical.next_action?.text ?? null, packet.highestSeverity, JSON.stringify(packet.riskCounts),
    canonical.questions_for_human?.length ?? 0, canonical.summary ?? null, canonical.agent?.name ?? null,
    canonical.project ?? null, canonical.branch ?? null, canonical.topic ?? null, canonical.task_id ?? null,
    canonical.session_id ?? null,
  ]);
  for (const [position, risk] of (canonical.open_risks ?? []).entries()) {
    riskRows.push([
      newId("rk", at), versionId, threadId, position, risk.id, risk.severity, risk.severity_raw, risk.detail,
      risk.mitigation ?? null, risk.fingerprint,
    ]);
  }
  for (const [position, question] of (canonical.questions_for_human ?? []).entries()) {
    questionRows.push([
      newId("aq", at), versionId, threadId, position, question.id, question.question, question.context ?? null,
      JSON.stringify(question.options ?? []), question.blocking,
    ]);
  }
}
