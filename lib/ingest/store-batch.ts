import "server-only";
import type { SqlExecutor } from "../db/client";
import { BatonError } from "../core/errors";
import { Prisma } from "../generated/prisma/client";
import { newId } from "../db/ids";
import type { Flag } from "../contract/lint";
import { ledgerEventsInsert, type LedgerKind, type NewLedgerEvent } from "../events/ledger";
import { FAILED_ATTEMPT_COLUMNS, failedAttemptRows } from "../views/lessons/failed-attempts";
import { BUDGET_CROSSING_COLUMNS, budgetCrossings, packetUsageRows, USAGE_COLUMNS } from "../views/usage/ingest-usage";
import { inChunks, insertTogether, updateOnConflict } from "../db/sql";
import { threadOutsideProject } from "../contract/project-binding";
import { planVersion } from "./supersede";
import { readThreads, THREAD_COLUMNS, THREAD_UPDATED_COLUMNS, threadFor, threadRow, type ThreadState } from "./thread-state";
import type { IngestResult, PendingPacket } from "./types";
import { collectRows, QUESTION_COLUMNS, RISK_COLUMNS, VERSION_COLUMNS } from "./version-rows";

interface StoredVersion {
  id: string;
  threadKey: string;
  flags: Flag[];
  /** It has a file: its own (it came from a watched folder) or one recorded later. */
  located: boolean;
  /** Verdict reports were sent with it. */
  hasReports: boolean;
}

async function readExistingVersions(sql: SqlExecutor, hashes: string[]): Promise<Map<string, StoredVersion>> {
  if (!hashes.length) return new Map();
  const rows = await inChunks(hashes, (chunk) =>
    sql.query<{ id: string; flags: string; contentHash: string; threadKey: string; sourcePath: string | null; locatedAt: string | null; reportCount: number | bigint }>(Prisma.sql`
      SELECT v."id", v."flags", v."contentHash", t."key" AS "threadKey", v."sourcePath", l."versionId" AS "locatedAt",
        (SELECT COUNT(*) FROM "PacketReport" r WHERE r."versionId" = v."id") AS "reportCount"
      FROM "PacketVersion" v JOIN "Thread" t ON t."id" = v."threadId"
      LEFT JOIN "PacketLocation" l ON l."versionId" = v."id"
      WHERE v."contentHash" IN (${Prisma.join(chunk)})`),
  );
  return new Map(
    rows.map((row) => [
      row.contentHash,
      {
        id: row.id,
        threadKey: row.threadKey,
        flags: JSON.parse(row.flags) as Flag[],
        located: row.sourcePath !== null || row.locatedAt !== null,
        hasReports: Number(row.reportCount) > 0,
      },
    ]),
  );
}

/** A duplicate's arrival: the packet again, the version already stored, and where the batch's events go. */
interface DuplicateArrival {
  item: PendingPacket;
  existing: StoredVersion;
  pushEvent: (at: Date, event: NewLedgerEvent) => void;
}

/** An event about the stored version, told by the duplicate's arrival. */
function pushVersionEvent({ item, existing, pushEvent }: DuplicateArrival, kind: LedgerKind, data: Record<string, unknown>): void {
  pushEvent(item.receivedAt, { kind, threadKey: existing.threadKey, versionId: existing.id, actor: item.source.actor, data });
}

/**
 * Reports sent with a duplicate are stored when its version has none yet (it arrived
 * without them, e.g. over curl, then came again from `baton push`); never replaced.
 */
function attachReports(arrival: DuplicateArrival, reportRows: unknown[][]): void {
  const { item, existing } = arrival;
  if (existing.hasReports || !item.reports.length) return;
  existing.hasReports = true;
  for (const report of item.reports) reportRows.push([existing.id, report.ref, report.json, report.bytes]);
  pushVersionEvent(arrival, "packet_reports_attached", { reports: item.reports.map((report) => report.ref) });
}

/**
 * A watched file whose content arrived first another way (HTTP, `baton push`): its place is
 * recorded on that version, once, so write-back and verdict reading find it whatever
 * arrived first (docs/decisions/050-one-location-per-packet.md).
 */
function recordLocation(arrival: DuplicateArrival, locationRows: unknown[][]): boolean {
  const { item: { source, receivedAt }, existing } = arrival;
  if (existing.located || source.kind !== "file" || !source.sourcePath || !source.workspaceRoot) return false;
  existing.located = true;
  locationRows.push([existing.id, source.sourcePath, source.workspaceRoot, receivedAt]);
  pushVersionEvent(arrival, "packet_located", { source_path: source.sourcePath, workspace_root: source.workspaceRoot });
  return true;
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
  sql: SqlExecutor,
  items: readonly PendingPacket[],
  results: (IngestResult | BatonError | undefined)[],
): Promise<Set<number>> {
  const stored = await readIdempotencyRecords(sql, items.flatMap((item) => (item.source.idempotency ? [item.source.idempotency] : [])));
  const newKeys = new Set<number>();
  const inBatch = new Map<string, string>();
  for (const [index, item] of items.entries()) {
    const idempotency = item.source.idempotency;
    if (!idempotency) continue;
    const id = keyId(idempotency);
    const bodyHash = inBatch.get(id) ?? stored.get(id);
    if (bodyHash === undefined) {
      inBatch.set(id, item.bodyHash);
      newKeys.add(index);
    } else if (bodyHash !== item.bodyHash) {
      results[index] = keyReused(idempotency.key);
    }
  }
  return newKeys;
}

const keyId = (idempotency: { tokenId: string; key: string }) => `${idempotency.tokenId}\u0000${idempotency.key}`;

/** The stored Idempotency-Key records of these (token, key) pairs: their body hashes by keyId. */
async function readIdempotencyRecords(sql: SqlExecutor, keys: { tokenId: string; key: string }[]): Promise<Map<string, string>> {
  const rows = await inChunks(keys, (chunk) =>
    sql.query<{ tokenId: string; key: string; bodyHash: string }>(
      Prisma.sql`SELECT "tokenId", "key", "bodyHash" FROM "IdempotencyRecord"
        WHERE ("tokenId", "key") IN (${Prisma.join(chunk.map((pair) => Prisma.sql`(${pair.tokenId}, ${pair.key})`))})`,
    ),
  );
  return new Map(rows.map((row) => [keyId(row), row.bodyHash]));
}

/** The stored Idempotency-Key record of (token, key), or undefined. */
export async function readIdempotencyRecord(sql: SqlExecutor, idempotency: { tokenId: string; key: string }): Promise<{ bodyHash: string } | undefined> {
  const [record] = await sql.query<{ bodyHash: string }>(
    Prisma.sql`SELECT "bodyHash" FROM "IdempotencyRecord" WHERE "tokenId" = ${idempotency.tokenId} AND "key" = ${idempotency.key}`,
  );
  return record;
}

/** A bound token's packet for a stored thread of another project (decision 056), or null. */
const refusal = (tokenProject: string | undefined, thread: ThreadState | undefined) =>
  tokenProject === undefined || thread === undefined ? null : threadOutsideProject(thread.key, thread.project, tokenProject);

/**
 * Stores a batch of validated packets in the caller's transaction (its executor), in order, as
 * if one after another: dedupe by content hash, find or create each thread,
 * supersede by the contract's ordering, record ledger events. A few statements
 * serve the whole batch. Returns one result (or a per-item BatonError) per item.
 */
export async function storeBatch(
  sql: SqlExecutor,
  items: readonly PendingPacket[],
): Promise<{ results: (IngestResult | BatonError)[]; stored: number }> {
  const results: (IngestResult | BatonError | undefined)[] = new Array(items.length);
  const newKeys = await checkKeys(sql, items, results);
  const open = items.map((item, index) => ({ item, index })).filter(({ index }) => results[index] === undefined);
  const known = await readExistingVersions(sql, [...new Set(open.map(({ item }) => item.packet.contentHash))]);
  const read = await readThreads(sql, [...new Set(open.map(({ item }) => item.packet.threadKey))]);
  const threads = read.threads;
  let arrivalSeq = read.lastArrivalSeq;

  const versionRows: unknown[][] = [];
  const riskRows: unknown[][] = [];
  const questionRows: unknown[][] = [];
  const failedRows: unknown[][] = [];
  const usageRows: unknown[][] = [];
  const events: NewLedgerEvent[] = [];
  const keyRows: unknown[][] = [];
  const locationRows: unknown[][] = [];
  const reportRows: unknown[][] = [];
  const pushEvent = (at: Date, event: NewLedgerEvent) => events.push({ ...event, at });

  for (const { item, index } of open) {
    const { packet, source, receivedAt } = item;
    const existing = known.get(packet.contentHash);
    const refused = existing ? null : refusal(source.project, threads.get(packet.threadKey));
    if (refused) {
      results[index] = refused;
      continue;
    }
    let result: IngestResult;
    if (existing) {
      const thread = threads.get(existing.threadKey);
      const arrival: DuplicateArrival = { item, existing, pushEvent };
      result = {
        packet_id: existing.id,
        thread_key: existing.threadKey,
        flags: existing.flags,
        duplicate: true,
        active: thread ? thread.activeVersionId === existing.id : true,
        locationRecorded: recordLocation(arrival, locationRows),
      };
      attachReports(arrival, reportRows);
    } else {
      const versionId = newId("pv", receivedAt.getTime());
      const thread = threadFor(threads, packet.threadKey, receivedAt);
      arrivalSeq += 1;
      const becomesActive = planVersion(item, versionId, arrivalSeq, thread, pushEvent);
      collectRows(item, versionId, arrivalSeq, thread.id, versionRows, riskRows, questionRows);
      failedRows.push(...failedAttemptRows(packet.canonical.failed_attempts, { versionId, threadId: thread.id, receivedAt }));
      for (const report of item.reports) reportRows.push([versionId, report.ref, report.json, report.bytes]);
      usageRows.push(...packetUsageRows(packet.canonical, { versionId, threadKey: packet.threadKey, receivedAt }));
      known.set(packet.contentHash, {
        id: versionId,
        threadKey: packet.threadKey,
        flags: packet.flags,
        located: Boolean(source.sourcePath),
        hasReports: item.reports.length > 0,
      });
      result = { packet_id: versionId, thread_key: packet.threadKey, flags: packet.flags, duplicate: false, active: becomesActive };
    }
    if (source.idempotency && newKeys.has(index)) keyRows.push([source.idempotency.tokenId, source.idempotency.key, item.bodyHash, result.packet_id, receivedAt]);
    results[index] = result;
  }

  // Budgets crossed by the batch's spending, read before the rows are written so that they go with them.
  const crossings = await budgetCrossings(sql, usageRows, new Date());
  events.push(...crossings.events);
  const changed = [...threads.values()].filter((thread) => thread.changed);
  // In an order valid one after another: new threads first without their active version (which refers to them), then what refers to them.
  await insertTogether(sql, [
    { table: "Thread", columns: THREAD_COLUMNS, rows: changed.filter((t) => t.isNew).map((t) => threadRow(t, false)) },
    { table: "PacketVersion", columns: VERSION_COLUMNS, rows: versionRows },
    { table: "Risk", columns: RISK_COLUMNS, rows: riskRows },
    { table: "AgentQuestion", columns: QUESTION_COLUMNS, rows: questionRows },
    { table: "FailedAttempt", columns: FAILED_ATTEMPT_COLUMNS, rows: failedRows },
    { table: "PacketLocation", columns: ["versionId", "sourcePath", "workspaceRoot", "recordedAt"], rows: locationRows },
    { table: "PacketReport", columns: ["versionId", "ref", "json", "bytes"], rows: reportRows },
    { table: "PacketUsage", columns: USAGE_COLUMNS, rows: usageRows },
    { table: "BudgetCrossing", columns: BUDGET_CROSSING_COLUMNS, rows: crossings.rows, onConflict: Prisma.raw(`ON CONFLICT ("budgetId", "periodStart") DO NOTHING`) },
    { table: "Thread", columns: THREAD_COLUMNS, rows: changed.map((t) => threadRow(t, true)), onConflict: updateOnConflict("id", THREAD_UPDATED_COLUMNS) },
    ledgerEventsInsert(events, new Date()),
    { table: "IdempotencyRecord", columns: ["tokenId", "key", "bodyHash", "packetId", "createdAt"], rows: keyRows },
  ]);
  return { results: results as (IngestResult | BatonError)[], stored: versionRows.length };
}
