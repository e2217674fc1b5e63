import "server-only";
import { database, databaseDialect, sqlExecutor } from "../../db/client";
import { BatonError } from "../../core/errors";
import { Prisma, type PacketVersion } from "../../generated/prisma/client";
import { z } from "zod";
import { SEVERITIES } from "../../contract/severity";
import {
  flagDto,
  riskCountsDto,
  SESSION_EVENT_KINDS,
  threadDetailDto,
  threadListDto,
  type ThreadCardDto,
  type ThreadDetailDto,
  type ThreadListDto,
} from "./dto";
import type { ThreadFilters, ThreadListQuery } from "./filters";
import { emptyHumanSection, sectionOf, summariseHuman, type HumanSection } from "../../human/section";
import { latestHumanSections } from "../../human/latest-revision";
import { instant, optionalInstant, type ExecutorRow } from "../../db/sql";

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

export function notFound(what: string): BatonError {
  return new BatonError("not_found", `${what} was not found.`);
}

/** A thread's card columns (cardSelect's, the active version's id as versionId) and its latest human section, as the hot-path executor hands them out. */
export type CardRow = ExecutorRow<Omit<CardColumns, "activeVersion"> & Omit<NonNullable<CardColumns["activeVersion"]>, "id">> & {
  versionId: string;
  humanSection: string | null;
};
type DetailVersionRow = ExecutorRow<Pick<PacketVersion, "id" | "receivedAt" | "producerCreatedAt" | "nextAction" | "highestSeverity" | "flags" | "source">>;

/** A card row read in raw SQL, as Prisma's cardSelect would have given it (the board's and the thread page's reads). */
export function cardColumnsOf(row: CardRow): CardColumns {
  return {
    id: row.id,
    key: row.key,
    agent: row.agent,
    project: row.project,
    branch: row.branch,
    topic: row.topic,
    archived: Boolean(row.archived),
    updatedAt: instant(row.updatedAt),
    lastSessionKind: row.lastSessionKind,
    lastSessionAt: optionalInstant(row.lastSessionAt),
    activeVersion: {
      id: row.versionId,
      receivedAt: instant(row.receivedAt),
      producerCreatedAt: optionalInstant(row.producerCreatedAt),
      summary: row.summary,
      taskId: row.taskId,
      nextAction: row.nextAction,
      highestSeverity: row.highestSeverity,
      riskCounts: row.riskCounts,
      questionCount: Number(row.questionCount),
      flags: row.flags,
    },
  };
}

/**
 * The latest human revision's section of the version aliased `v`, as the column "humanSection":
 * picked on the (versionId, revision) index, one per row (the board's cards, the thread page, the merged handoff).
 */
export const LATEST_HUMAN_SECTION = Prisma.sql`(SELECT h."section" FROM "HumanRevision" h WHERE h."versionId" = v."id" ORDER BY h."revision" DESC LIMIT 1) AS "humanSection"`;

/** The human section of a card row's latest revision (the empty one when no person acted). */
export const humanSectionOf = (row: Pick<CardRow, "humanSection">): HumanSection => sectionOf(row.humanSection === null ? [] : [{ section: row.humanSection }]);


/** A thread's page: its card, its people section and every version; two statements through the hot-path executor (see getPacket, ./packet-reads.ts). */
export async function getThreadDetail(key: string): Promise<ThreadDetailDto> {
  const sql = await sqlExecutor();
  const [row] = await sql.query<CardRow>(
    Prisma.sql`SELECT t."id", t."key", t."agent", t."project", t."branch", t."topic", t."archived", t."updatedAt", t."lastSessionKind", t."lastSessionAt",
        v."id" AS "versionId", v."receivedAt", v."producerCreatedAt", v."summary", v."taskId", v."nextAction", v."highestSeverity",
        v."riskCounts", v."questionCount", v."flags",
        ${LATEST_HUMAN_SECTION}
      FROM "Thread" t JOIN "PacketVersion" v ON v."id" = t."activeVersionId"
      WHERE t."key" = ${key}`,
  );
  if (!row) throw notFound(`Thread "${key}"`);
  const versions = await sql.query<DetailVersionRow>(
    Prisma.sql`SELECT "id", "receivedAt", "producerCreatedAt", "nextAction", "highestSeverity", "flags", "source" FROM "PacketVersion"
      WHERE "threadId" = ${row.id} ORDER BY "sortAt" DESC, "receivedAt" DESC, "id" DESC`,
  );
  const human = humanSectionOf(row);
  return threadDetailDto.parse({
    ...toCard(cardColumnsOf(row), human),
    human,
    versions: versions.map((version) => ({
      id: version.id,
      active: version.id === row.versionId,
      source: version.source,
      received_at: instant(version.receivedAt).toISOString(),
      created_at: optionalInstant(version.producerCreatedAt)?.toISOString() ?? null,
      next_action: version.nextAction,
      highest_severity: version.highestSeverity,
      flags: JSON.parse(version.flags),
    })),
  });
}
