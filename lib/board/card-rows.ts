import "server-only";
import { Prisma } from "../generated/prisma/client";
import { sqlExecutor } from "../db/client";
import { inChunks } from "../db/sql";
import { threadWorkOf } from "../integrations/thread-work";
import type { ThreadWorkDto } from "../integrations/dto";
import type { CardUsageDto } from "../views/usage/dto";
import { cardUsageOf, type UsageColumns } from "../views/usage/version-usage";
import { cardColumnsOf, humanSectionOf, LATEST_HUMAN_SECTION, toCard, type CardRow } from "../views/threads/queries";
import type { ThreadCardDto } from "../views/threads/dto";
import type { VersionPlace } from "../views/verdict/version";

/**
 * The board's cards with what each shows beside its thread and packet (its latest human
 * section, usage, code-host work, and where its verdict is read from), in one statement per
 * chunk of keys (docs/decisions/074-board-reads.md): the delta path places a card per batch of
 * ledger events per set of filters, where Prisma's per-query work (compiling, its request
 * pipeline) outweighed the reads themselves.
 */

export interface BoardCardRow {
  card: ThreadCardDto;
  /** The thread's id (the watchdog's commit history is read by it). */
  threadId: string;
  work: ThreadWorkDto | null;
  usage: CardUsageDto | null;
  place: VersionPlace;
}

/**
 * The columns of Prisma's cardSelect (the thread's, and its active version's with the version's
 * id as versionId) as the hot-path executor hands them out, and what the board shows beside them.
 */
type Row = CardRow & UsageColumns & {
  versionProject: string | null;
  sourcePath: string | null;
  workspaceRoot: string | null;
  locationSourcePath: string | null;
  locationWorkspaceRoot: string | null;
  reportCount: number;
  usageVersionId: string | null;
  pullRequest: string | null;
  ci: string | null;
  review: string | null;
};

const CARD_ROWS = Prisma.sql`SELECT t."id", t."key", t."agent", t."project", t."branch", t."topic", t."archived", t."updatedAt",
    t."lastSessionKind", t."lastSessionAt",
    v."id" AS "versionId", v."receivedAt", v."producerCreatedAt", v."summary", v."taskId", v."nextAction", v."highestSeverity",
    v."riskCounts", v."questionCount", v."flags",
    v."project" AS "versionProject", v."sourcePath", v."workspaceRoot",
    l."sourcePath" AS "locationSourcePath", l."workspaceRoot" AS "locationWorkspaceRoot",
    (SELECT COUNT(*) FROM "PacketReport" p WHERE p."versionId" = v."id") AS "reportCount",
    ${LATEST_HUMAN_SECTION},
    u."versionId" AS "usageVersionId", u."inputTokens", u."outputTokens", u."costAmount", u."costCurrency", u."model", u."durationMs",
    w."pullRequest", w."ci", w."review"
  FROM "Thread" t
  JOIN "PacketVersion" v ON v."id" = t."activeVersionId"
  LEFT JOIN "PacketLocation" l ON l."versionId" = v."id"
  LEFT JOIN "PacketUsage" u ON u."versionId" = v."id"
  LEFT JOIN "ThreadWork" w ON w."threadKey" = t."key"`;


async function reportRefsOf(versionIds: readonly string[]): Promise<Map<string, string[]>> {
  const sql = await sqlExecutor();
  const rows = await inChunks(versionIds, (chunk) =>
    sql.query<{ versionId: string; ref: string }>(Prisma.sql`SELECT "versionId", "ref" FROM "PacketReport" WHERE "versionId" IN (${Prisma.join(chunk)})`),
  );
  const refs = new Map<string, string[]>();
  for (const row of rows) refs.set(row.versionId, [...(refs.get(row.versionId) ?? []), row.ref]);
  return refs;
}

function toBoardCardRow(row: Row, reportRefs: readonly string[]): BoardCardRow {
  const card = toCard(cardColumnsOf(row), humanSectionOf(row));
  return {
    card,
    threadId: row.id,
    work: threadWorkOf({ pullRequest: row.pullRequest, ci: row.ci, review: row.review }),
    usage:
      row.usageVersionId === null
        ? null
        : cardUsageOf({
            inputTokens: row.inputTokens,
            outputTokens: row.outputTokens,
            costAmount: row.costAmount,
            costCurrency: row.costCurrency,
            model: row.model,
            durationMs: row.durationMs,
          }),
    place: {
      id: row.versionId,
      project: row.versionProject,
      sourcePath: row.sourcePath,
      workspaceRoot: row.workspaceRoot,
      location:
        row.locationSourcePath !== null && row.locationWorkspaceRoot !== null
          ? { sourcePath: row.locationSourcePath, workspaceRoot: row.locationWorkspaceRoot }
          : null,
      reportRefs,
    },
  };
}

/**
 * The cards of threads with an active version: every non-archived one (no `keys`), or those
 * among `keys` (archived too with `archived: true`, for the flags other views show).
 */
export async function readBoardCardRows(options: { keys?: readonly string[]; archived?: boolean } = {}): Promise<BoardCardRow[]> {
  const sql = await sqlExecutor();
  const archived = options.archived ? Prisma.empty : Prisma.sql`AND t."archived" = FALSE`;
  const rows = options.keys
    ? await inChunks([...new Set(options.keys)], (chunk) => sql.query<Row>(Prisma.sql`${CARD_ROWS} WHERE t."key" IN (${Prisma.join(chunk)}) ${archived}`))
    : await sql.query<Row>(Prisma.sql`${CARD_ROWS} WHERE t."archived" = FALSE`);
  // Reports are attached to few packets: their refs are read only for those (they key the verdict cache).
  const withReports = rows.filter((row) => Number(row.reportCount) > 0).map((row) => row.versionId);
  const refs = withReports.length ? await reportRefsOf(withReports) : new Map<string, string[]>();
  return rows.map((row) => toBoardCardRow(row, refs.get(row.versionId) ?? []));
}
