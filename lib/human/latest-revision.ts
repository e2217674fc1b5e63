import "server-only";
import { sqlExecutor } from "../db/client";
import { Prisma } from "../generated/prisma/client";
import { inChunks } from "../db/sql";
import { emptyHumanSection, sectionOf, type HumanSection } from "./section";

/**
 * The latest human section of each version, in one statement per chunk: the newest
 * revision is picked in SQL on the (versionId, revision) index. (A Prisma `take: 1`
 * under a list of parents reads every revision of every parent and keeps one in memory.)
 */
export async function latestHumanSections(versionIds: readonly string[]): Promise<Map<string, HumanSection>> {
  const sql = await sqlExecutor();
  const rows = await inChunks([...new Set(versionIds)], (chunk) =>
    sql.query<{ versionId: string; section: string }>(
      Prisma.sql`SELECT h."versionId", h."section" FROM "HumanRevision" h
        WHERE h."versionId" IN (${Prisma.join(chunk)})
          AND h."revision" = (SELECT MAX(r."revision") FROM "HumanRevision" r WHERE r."versionId" = h."versionId")`,
    ),
  );
  const sections = new Map(rows.map((row) => [row.versionId, sectionOf([row])]));
  for (const id of versionIds) if (!sections.has(id)) sections.set(id, emptyHumanSection());
  return sections;
}
