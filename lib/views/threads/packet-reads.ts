import "server-only";
import { handoffWork } from "../../integrations/thread-work";
import { sqlExecutor } from "../../db/client";
import { Prisma, type PacketVersion } from "../../generated/prisma/client";
import { packetDto, type PacketDto } from "./dto";
import type { HumanSection } from "../../human/section";
import { latestHumanSections } from "../../human/latest-revision";
import { instant, optionalInstant, type ExecutorRow } from "../../db/sql";
import { placeOf } from "../verdict/roots";
import { humanSectionOf, LATEST_HUMAN_SECTION, notFound } from "./queries";

/** One packet's reads: its stored version (every export of it), its human section, and the merged handoff the next session reads. */

/** A stored version's columns as getPacket reads them (the hot-path executor's shapes: instants as ISO text). */
type PacketRow = ExecutorRow<
  Pick<PacketVersion, "id" | "contentHash" | "source" | "sourcePath" | "workspaceRoot" | "receivedAt" | "producerCreatedAt" | "flags" | "canonicalJson" | "receivedJson">
> & {
  threadKey: string;
  activeVersionId: string | null;
  locationSourcePath: string | null;
  locationWorkspaceRoot: string | null;
};

/**
 * One stored version, in one statement through the hot-path executor: every export of a
 * packet reads it (its JSON, its markdown), and Prisma's per-query compiling was most of the
 * cost of such a request (docs/decisions/085-notifier-reads-per-step.md).
 */
export async function getPacket(id: string): Promise<PacketDto> {
  const sql = await sqlExecutor();
  const [row] = await sql.query<PacketRow>(
    Prisma.sql`SELECT v."id", v."contentHash", v."source", v."sourcePath", v."workspaceRoot", v."receivedAt", v."producerCreatedAt",
        v."flags", v."canonicalJson", v."receivedJson", t."key" AS "threadKey", t."activeVersionId",
        l."sourcePath" AS "locationSourcePath", l."workspaceRoot" AS "locationWorkspaceRoot"
      FROM "PacketVersion" v
      JOIN "Thread" t ON t."id" = v."threadId"
      LEFT JOIN "PacketLocation" l ON l."versionId" = v."id"
      WHERE v."id" = ${id}`,
  );
  if (!row) throw notFound(`Packet "${id}"`);
  const place = placeOf({
    sourcePath: row.sourcePath,
    workspaceRoot: row.workspaceRoot,
    location:
      row.locationSourcePath !== null && row.locationWorkspaceRoot !== null ? { sourcePath: row.locationSourcePath, workspaceRoot: row.locationWorkspaceRoot } : null,
  });
  const receivedAt = instant(row.receivedAt).toISOString();
  return packetDto.parse({
    id: row.id,
    thread_key: row.threadKey,
    active: row.activeVersionId === row.id,
    content_hash: row.contentHash,
    source: row.source,
    source_path: place.sourcePath,
    workspace_root: place.workspaceRoot,
    received_at: receivedAt,
    created_at: optionalInstant(row.producerCreatedAt)?.toISOString() ?? null,
    flags: JSON.parse(row.flags),
    flags_computed_at: receivedAt,
    canonical: JSON.parse(row.canonicalJson),
    received: JSON.parse(row.receivedJson),
  });
}

/** A version's latest human section (the empty one when no person acted), for its Markdown renders. */
export async function getHumanSection(versionId: string): Promise<HumanSection> {
  return (await latestHumanSections([versionId])).get(versionId)!;
}

/**
 * The merged packet the next session reads: the agent's fields exactly as it
 * wrote them, in its key order, with Baton's `human` section in place of any
 * it carried.
 */
export async function getMergedHandoff(key: string): Promise<{ packetId: string; body: Record<string, unknown> }> {
  const sql = await sqlExecutor();
  // The code host's CI and review (lib/integrations) are read alongside, not after: a waiting read's first look stays one round
  // trip. The active version and its latest human section in one statement (every waiting client's wake reads it).
  const [[row], work] = await Promise.all([
    sql.query<{ id: string; receivedJson: string; humanSection: string | null }>(
      Prisma.sql`SELECT v."id", v."receivedJson",
          ${LATEST_HUMAN_SECTION}
        FROM "Thread" t JOIN "PacketVersion" v ON v."id" = t."activeVersionId"
        WHERE t."key" = ${key}`,
    ),
    handoffWork(key),
  ]);
  if (!row) throw notFound(`Thread "${key}"`);
  const received = JSON.parse(row.receivedJson) as Record<string, unknown>;
  const merged: Record<string, unknown> = {};
  for (const field of Object.keys(received)) {
    if (field !== "human") Object.defineProperty(merged, field, { value: received[field], enumerable: true });
  }
  merged.human = humanSectionOf(row);
  // Beside the human section: Baton's, not the agent's.
  Object.assign(merged, work);
  return { packetId: row.id, body: merged };
}
