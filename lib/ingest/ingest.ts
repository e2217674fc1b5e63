import { canonicalJson, sha256Hex } from "../packet/canonical-json";
import { preparePacket, type PreparedPacket } from "../packet/prepare";
import type { Flag } from "../packet/lint";
import { BatonError } from "../errors";
import { inTransaction, type Tx } from "../db";
import { newId } from "../ids";
import { Prisma } from "../generated/prisma/client";
import { appendLedgerEvents, type NewLedgerEvent } from "../ledger/events";
import { announceLedger } from "../ledger/bus";
import { isNewer, sortTimeFor } from "./ordering";

export type IngestSourceKind = "http" | "file" | "cli";

export interface IngestSource {
  kind: IngestSourceKind;
  /** Who sent it, for the ledger: `token:NAME`, `watcher`, `cli`. */
  actor: string;
  /** For watched files: the file and the workspace root (the folder holding outputs/). */
  sourcePath?: string;
  workspaceRoot?: string;
  /** An Idempotency-Key and the token it is scoped to. */
  idempotency?: { tokenId: string; key: string };
}

export interface IngestResult {
  packet_id: string;
  thread_key: string;
  flags: Flag[];
  duplicate: boolean;
  /** False when an older packet arrived late and was stored already superseded. */
  active: boolean;
}

interface DuplicateRow {
  id: string;
  flags: string;
  threadKey: string;
  activeVersionId: string | null;
}

function duplicateResult(row: DuplicateRow): IngestResult {
  return {
    packet_id: row.id,
    thread_key: row.threadKey,
    flags: JSON.parse(row.flags) as Flag[],
    duplicate: true,
    active: row.activeVersionId === row.id,
  };
}

// The write path uses Prisma's raw SQL on the same client: the ORM's per-query
// compilation costs about 0.5 ms, and ingest is the hot path (docs/decisions/003).
async function findVersion(tx: Tx, where: Prisma.Sql): Promise<IngestResult | null> {
  const rows = await tx.$queryRaw<DuplicateRow[]>`
    SELECT v."id", v."flags", t."key" AS "threadKey", t."activeVersionId"
    FROM "PacketVersion" v JOIN "Thread" t ON t."id" = v."threadId"
    WHERE ${where}`;
  return rows[0] ? duplicateResult(rows[0]) : null;
}

/** Same key, same body: the earlier answer. Same key, other body: refused. */
async function checkIdempotency(tx: Tx, source: IngestSource, bodyHash: string): Promise<IngestResult | null> {
  if (!source.idempotency) return null;
  const { tokenId, key } = source.idempotency;
  const record = await tx.idempotencyRecord.findUnique({ where: { tokenId_key: { tokenId, key } } });
  if (!record) return null;
  if (record.bodyHash !== bodyHash) {
    throw new BatonError(
      "idempotency_key_reused",
      "This Idempotency-Key was already used with a different body; use a new key for new content.",
      { idempotency_key: key },
    );
  }
  return record.packetId ? findVersion(tx, Prisma.sql`v."id" = ${record.packetId}`) : null;
}

interface ThreadRow {
  id: string;
  archived: boolean | number | bigint;
  activeVersionId: string | null;
  activeSortAt: string | Date | null;
  activeReceivedAt: string | Date | null;
}

const asDate = (value: string | Date) => (value instanceof Date ? value : new Date(value));

async function storeVersion(tx: Tx, packet: PreparedPacket, source: IngestSource, receivedAt: Date): Promise<IngestResult> {
  const { canonical } = packet;
  const versionId = newId("pv", receivedAt.getTime());
  const sortAt = sortTimeFor(packet.createdAtMs, receivedAt);
  const [thread] = await tx.$queryRaw<ThreadRow[]>`
    SELECT "id", "archived", "activeVersionId", "activeSortAt", "activeReceivedAt"
    FROM "Thread" WHERE "key" = ${packet.threadKey}`;
  const threadId = thread?.id ?? newId("th", receivedAt.getTime());

  const becomesActive =
    !thread?.activeVersionId ||
    !thread.activeSortAt ||
    !thread.activeReceivedAt ||
    isNewer(
      { sortAt, receivedAt, id: versionId },
      { sortAt: asDate(thread.activeSortAt), receivedAt: asDate(thread.activeReceivedAt), id: thread.activeVersionId },
    );
  const producerArchives = becomesActive && canonical.status === "archived";
  const wasArchived = Boolean(thread && Number(thread.archived));
  const agent = canonical.agent?.name ?? null;
  const project = canonical.project ?? null;
  const branch = canonical.branch ?? null;
  const topic = canonical.topic ?? null;

  if (!thread) {
    await tx.$executeRaw`
      INSERT INTO "Thread" ("id", "key", "archived", "createdAt", "updatedAt", "agent", "project", "branch", "topic")
      VALUES (${threadId}, ${packet.threadKey}, ${false}, ${receivedAt}, ${receivedAt}, ${agent}, ${project}, ${branch}, ${topic})`;
  }
  await tx.$executeRaw`
    INSERT INTO "PacketVersion" ("id", "threadId", "contentHash", "receivedJson", "canonicalJson", "source", "sourcePath",
      "workspaceRoot", "producerCreatedAt", "receivedAt", "sortAt", "flags", "nextAction", "highestSeverity", "riskCounts",
      "questionCount", "summary", "agent", "project", "branch", "topic", "taskId", "sessionId")
    VALUES (${versionId}, ${threadId}, ${packet.contentHash}, ${JSON.stringify(packet.received)}, ${JSON.stringify(canonical)},
      ${source.kind}, ${source.sourcePath ?? null}, ${source.workspaceRoot ?? null},
      ${packet.createdAtMs === null ? null : new Date(packet.createdAtMs)}, ${receivedAt}, ${sortAt},
      ${JSON.stringify(packet.flags)}, ${canonical.next_action?.text ?? null}, ${packet.highestSeverity},
      ${JSON.stringify(packet.riskCounts)}, ${canonical.questions_for_human?.length ?? 0}, ${canonical.summary ?? null},
      ${agent}, ${project}, ${branch}, ${topic}, ${canonical.task_id ?? null}, ${canonical.session_id ?? null})`;

  const risks = canonical.open_risks ?? [];
  if (risks.length) {
    await tx.$executeRaw`
      INSERT INTO "Risk" ("id", "versionId", "threadId", "position", "riskId", "severity", "severityRaw", "detail", "mitigation", "fingerprint")
      VALUES ${Prisma.join(
        risks.map(
          (risk, position) =>
            Prisma.sql`(${newId("rk", receivedAt.getTime())}, ${versionId}, ${threadId}, ${position}, ${risk.id}, ${risk.severity},
              ${risk.severity_raw}, ${risk.detail}, ${risk.mitigation ?? null}, ${risk.fingerprint})`,
        ),
      )}`;
  }
  const questions = canonical.questions_for_human ?? [];
  if (questions.length) {
    await tx.$executeRaw`
      INSERT INTO "AgentQuestion" ("id", "versionId", "threadId", "position", "questionId", "question", "context", "options", "blocking")
      VALUES ${Prisma.join(
        questions.map(
          (question, position) =>
            Prisma.sql`(${newId("aq", receivedAt.getTime())}, ${versionId}, ${threadId}, ${position}, ${question.id},
              ${question.question}, ${question.context ?? null}, ${JSON.stringify(question.options ?? [])}, ${question.blocking})`,
        ),
      )}`;
  }

  // A new packet re-opens an archived thread, whatever its age.
  const archived = becomesActive ? producerArchives : false;
  if (becomesActive) {
    await tx.$executeRaw`
      UPDATE "Thread" SET "updatedAt" = ${receivedAt}, "archived" = ${archived}, "activeVersionId" = ${versionId},
        "activeSortAt" = ${sortAt}, "activeReceivedAt" = ${receivedAt},
        "agent" = ${agent}, "project" = ${project}, "branch" = ${branch}, "topic" = ${topic}
      WHERE "id" = ${threadId}`;
  } else {
    await tx.$executeRaw`UPDATE "Thread" SET "updatedAt" = ${receivedAt}, "archived" = ${archived} WHERE "id" = ${threadId}`;
  }

  const events: NewLedgerEvent[] = [
    {
      kind: "packet_received",
      threadKey: packet.threadKey,
      versionId,
      actor: source.actor,
      data: {
        source: source.kind,
        ...(source.sourcePath ? { source_path: source.sourcePath } : {}),
        flags: packet.flags.map((flag) => flag.code),
        next_action: canonical.next_action?.text ?? null,
        highest_severity: packet.highestSeverity,
        superseded_on_arrival: !becomesActive,
      },
    },
  ];
  if (becomesActive && thread?.activeVersionId) {
    events.push({
      kind: "packet_superseded",
      threadKey: packet.threadKey,
      versionId: thread.activeVersionId,
      actor: source.actor,
      data: { superseded_by: versionId },
    });
  }
  if (wasArchived && !producerArchives) {
    events.push({ kind: "thread_reopened", threadKey: packet.threadKey, versionId, actor: source.actor, data: {} });
  }
  if (producerArchives && !wasArchived) {
    events.push({
      kind: "thread_archived",
      threadKey: packet.threadKey,
      versionId,
      actor: source.actor,
      data: { reason: "the producer marked the packet archived" },
    });
  }
  await appendLedgerEvents(tx, events, receivedAt);
  return { packet_id: versionId, thread_key: packet.threadKey, flags: packet.flags, duplicate: false, active: becomesActive };
}

function isUniqueViolation(error: unknown): boolean {
  const record = error as { code?: string; message?: string } | null;
  return record?.code === "P2002" || /Unique constraint|UniqueConstraintViolation/.test(record?.message ?? "");
}

/**
 * The one ingest path (HTTP, watched folders, CLI): validate, normalise, hash,
 * dedupe, find the thread, store the version, supersede by the contract's
 * ordering and record ledger events, all in one transaction.
 * Throws BatonError for bodies that are not packets; nothing is stored then.
 */
export async function ingestPacket(body: unknown, source: IngestSource, receivedAt = new Date()): Promise<IngestResult> {
  const packet = preparePacket(body, receivedAt.getTime());
  const bodyHash = source.idempotency ? sha256Hex(canonicalJson(body)) : "";
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await inTransaction(async (tx) => {
        const replay = await checkIdempotency(tx, source, bodyHash);
        if (replay) return replay;
        const stored = (await findVersion(tx, Prisma.sql`v."contentHash" = ${packet.contentHash}`)) ?? (await storeVersion(tx, packet, source, receivedAt));
        if (source.idempotency) {
          await tx.idempotencyRecord.create({
            data: { ...source.idempotency, bodyHash, packetId: stored.packet_id, createdAt: receivedAt },
          });
        }
        return stored;
      });
      if (!result.duplicate) announceLedger();
      return result;
    } catch (error) {
      // Another writer (another instance) stored the same content or thread first: read it again.
      if (isUniqueViolation(error) && attempt < 3) continue;
      throw error;
    }
  }
}
