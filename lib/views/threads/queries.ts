import "server-only";
import { handoffWork } from "../../integrations/thread-work";
import { database, databaseDialect } from "../../db/client";
import { BatonError } from "../../core/errors";
import type { Prisma } from "../../generated/prisma/client";
import { z } from "zod";
import { SEVERITIES } from "../../contract/severity";
import {
  flagDto,
  packetDto,
  riskCountsDto,
  SESSION_EVENT_KINDS,
  threadDetailDto,
  threadListDto,
  type PacketDto,
  type ThreadCardDto,
  type ThreadDetailDto,
  type ThreadListDto,
} from "./dto";
import type { ThreadFilters, ThreadListQuery } from "./filters";
import { emptyHumanSection, latestHumanRevision, sectionOf, summariseHuman, type HumanSection } from "../../human/section";
import { latestHumanSections } from "../../human/latest-revision";
import { placeOf } from "../verdict/roots";

const cardVersionSelect = {
  id: true,
  receivedAt: true,
  producerCreatedAt: true,
  summary: true,
  taskId: true,
  nextAction: true,
  highestSeverity: true,
  riskCounts: true,
  questionCount: true,
  flags: true,
} satisfies Prisma.PacketVersionSelect;

export const cardSelect = {
  id: true,
  key: true,
  agent: true,
  project: true,
  branch: true,
  topic: true,
  archived: true,
  updatedAt: true,
  lastSessionKind: true,
  lastSessionAt: true,
  activeVersion: { select: cardVersionSelect },
} satisfies Prisma.ThreadSelect;

/** What a card is made of, however it was read (Prisma's cardSelect, or the board's one statement: lib/board/card-rows.ts). */
export type CardColumns = Prisma.ThreadGetPayload<{ select: typeof cardSelect }>;

/** Cards for rows of cardSelect, with each active version's latest human section (one more statement). */
export async function toCards(rows: readonly CardColumns[]): Promise<ThreadCardDto[]> {
  const sections = await latestHumanSections(rows.flatMap((row) => (row.activeVersion ? [row.activeVersion.id] : [])));
  return rows.map((row) => toCard(row, sections.get(row.activeVersion?.id ?? "") ?? emptyHumanSection()));
}

/**
 * The parts of a card stored as free text or JSON, checked here: the rest of the card is
 * typed already, so the whole card is not parsed again (the board builds 1,000 of them per
 * load: docs/decisions/074-board-reads.md).
 */
const storedCardParts = z.object({
  lastSessionKind: z.enum(SESSION_EVENT_KINDS).nullable(),
  highestSeverity: z.enum(SEVERITIES).nullable(),
  riskCounts: riskCountsDto,
  flags: z.array(flagDto),
});

/** A thread's card from its row and its active version's latest human section. */
export function toCard(row: CardColumns, section: HumanSection): ThreadCardDto {
  const version = row.activeVersion;
  if (!version) throw new Error(`thread ${row.key} has no active version`);
  const human = summariseHuman(section, version.questionCount);
  // The lint flags as stored at ingest; what a card shows is lib/board/flags.ts's (lib/views/threads/flagged.ts).
  const stored = storedCardParts.parse({
    lastSessionKind: row.lastSessionAt ? row.lastSessionKind : null,
    highestSeverity: version.highestSeverity,
    riskCounts: JSON.parse(version.riskCounts),
    flags: JSON.parse(version.flags),
  });
  const receivedAt = version.receivedAt.toISOString();
  return {
    key: row.key,
    agent: row.agent,
    project: row.project,
    branch: row.branch,
    topic: row.topic,
    archived: row.archived,
    updated_at: row.updatedAt.toISOString(),
    last_session: stored.lastSessionKind && row.lastSessionAt ? { kind: stored.lastSessionKind, at: row.lastSessionAt.toISOString() } : null,
    active_packet: {
      id: version.id,
      received_at: receivedAt,
      created_at: version.producerCreatedAt?.toISOString() ?? null,
      summary: version.summary,
      task_id: version.taskId,
      next_action: version.nextAction,
      highest_severity: stored.highestSeverity,
      risk_counts: stored.riskCounts,
      question_count: version.questionCount,
      flags: stored.flags,
      flags_computed_at: receivedAt,
      human,
    },
  };
}

export function filterWhere(filters: ThreadFilters): Prisma.ThreadWhereInput {
  const version: Prisma.PacketVersionWhereInput[] = [];
  if (filters.severity.length) version.push({ highestSeverity: { in: filters.severity } });
  for (const flag of filters.flag) version.push({ flags: { contains: `"code":"${flag}"` } });
  const text = filters.q;
  // Case-insensitive on both databases: SQLite's LIKE already is; PostgreSQL needs the
  // mode, which the (SQLite-generated) client types do not list.
  const containsText = { contains: text, ...(databaseDialect() === "postgresql" ? { mode: "insensitive" } : {}) } as Prisma.StringFilter;
  return {
    archived: false,
    activeVersionId: { not: null },
    ...(filters.agent ? { agent: filters.agent } : {}),
    ...(filters.project ? { project: filters.project } : {}),
    ...(filters.branch ? { branch: filters.branch } : {}),
    ...(text
      ? {
          OR: [
            { key: containsText },
            { agent: containsText },
            { project: containsText },
            { branch: containsText },
            { topic: containsText },
            { activeVersion: { nextAction: containsText } },
            { activeVersion: { summary: containsText } },
          ],
        }
      : {}),
    ...(version.length ? { activeVersion: { AND: version } } : {}),
  };
}

function encodeCursor(row: { updatedAt: Date; id: string }): string {
  return Buffer.from(`${row.updatedAt.toISOString()}|${row.id}`).toString("base64url");
}

function decodeCursor(cursor: string): { updatedAt: Date; id: string } {
  const [at, id] = Buffer.from(cursor, "base64url").toString("utf8").split("|");
  const updatedAt = new Date(at ?? "");
  if (!id || Number.isNaN(updatedAt.getTime())) {
    throw new BatonError("invalid_request", "cursor is not one this API returned; start again without it.", { field: "cursor" });
  }
  return { updatedAt, id };
}

/** Active (non-archived) threads, most recently active first, with their card summary. */
export async function listActiveThreads(query: ThreadListQuery): Promise<ThreadListDto> {
  const db = await database();
  const where = filterWhere(query);
  if (query.cursor) {
    const after = decodeCursor(query.cursor);
    where.AND = [
      { OR: [{ updatedAt: { lt: after.updatedAt } }, { updatedAt: after.updatedAt, id: { lt: after.id } }] },
    ];
  }
  const rows = await db.thread.findMany({
    where,
    select: cardSelect,
    orderBy: [{ updatedAt: "desc" }, { id: "desc" }],
    take: query.limit + 1,
  });
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return threadListDto.parse({
    threads: await toCards(page),
    next_cursor: rows.length > query.limit && last ? encodeCursor(last) : null,
  });
}

function notFound(what: string): BatonError {
  return new BatonError("not_found", `${what} was not found.`);
}

export async function getThreadDetail(key: string): Promise<ThreadDetailDto> {
  const db = await database();
  const row = await db.thread.findUnique({
    where: { key },
    select: {
      ...cardSelect,
      // One parent: Prisma's take is SQL here.
      activeVersion: { select: { ...cardSelect.activeVersion.select, humanRevisions: latestHumanRevision } },
      activeVersionId: true,
      versions: {
        select: { id: true, receivedAt: true, producerCreatedAt: true, nextAction: true, highestSeverity: true, flags: true, source: true },
        orderBy: [{ sortAt: "desc" }, { receivedAt: "desc" }, { id: "desc" }],
      },
    },
  });
  if (!row?.activeVersion) throw notFound(`Thread "${key}"`);
  const human = sectionOf(row.activeVersion.humanRevisions);
  return threadDetailDto.parse({
    ...toCard(row, human),
    human,
    versions: row.versions.map((version) => ({
      id: version.id,
      active: version.id === row.activeVersionId,
      source: version.source,
      received_at: version.receivedAt.toISOString(),
      created_at: version.producerCreatedAt?.toISOString() ?? null,
      next_action: version.nextAction,
      highest_severity: version.highestSeverity,
      flags: JSON.parse(version.flags),
    })),
  });
}

export async function getPacket(id: string): Promise<PacketDto> {
  const db = await database();
  const row = await db.packetVersion.findUnique({
    where: { id },
    include: { thread: { select: { key: true, activeVersionId: true } }, location: { select: { sourcePath: true, workspaceRoot: true } } },
  });
  if (!row) throw notFound(`Packet "${id}"`);
  const place = placeOf(row);
  return packetDto.parse({
    id: row.id,
    thread_key: row.thread.key,
    active: row.thread.activeVersionId === row.id,
    content_hash: row.contentHash,
    source: row.source,
    source_path: place.sourcePath,
    workspace_root: place.workspaceRoot,
    received_at: row.receivedAt.toISOString(),
    created_at: row.producerCreatedAt?.toISOString() ?? null,
    flags: JSON.parse(row.flags),
    flags_computed_at: row.receivedAt.toISOString(),
    canonical: JSON.parse(row.canonicalJson),
    received: JSON.parse(row.receivedJson),
  });
}

/** A version's latest human section (the empty one when no person acted), for its Markdown renders. */
export async function getHumanSection(versionId: string): Promise<HumanSection> {
  const db = await database();
  const rows = await db.humanRevision.findMany({ where: { versionId }, ...latestHumanRevision });
  return sectionOf(rows);
}

/**
 * The merged packet the next session reads: the agent's fields exactly as it
 * wrote them, in its key order, with Baton's `human` section in place of any
 * it carried.
 */
export async function getMergedHandoff(key: string): Promise<{ packetId: string; body: Record<string, unknown> }> {
  const db = await database();
  // The code host's CI and review (lib/integrations) are read alongside, not after: a waiting read's first look stays one round trip.
  const [row, work] = await Promise.all([
    db.thread.findUnique({
      where: { key },
      select: { activeVersion: { select: { id: true, receivedJson: true, humanRevisions: latestHumanRevision } } },
    }),
    handoffWork(key),
  ]);
  if (!row?.activeVersion) throw notFound(`Thread "${key}"`);
  const received = JSON.parse(row.activeVersion.receivedJson) as Record<string, unknown>;
  const merged: Record<string, unknown> = {};
  for (const field of Object.keys(received)) {
    if (field !== "human") Object.defineProperty(merged, field, { value: received[field], enumerable: true });
  }
  merged.human = sectionOf(row.activeVersion.humanRevisions);
  // Beside the human section: Baton's, not the agent's.
  Object.assign(merged, work);
  return { packetId: row.activeVersion.id, body: merged };
}
