import "server-only";
import { database } from "../../db/client";
import { inChunks } from "../../db/sql";
import type { CanonicalPacket } from "../../contract/canonical";
import { peekVerdictCached, readVerdictCached } from "./cache";
import type { VerdictReadingDto } from "./dto";
import { attachedReportsOf, attachedReportsSelect, placeOf, versionPlaceSelect, workspaceRootsFor } from "./roots";

/**
 * The verdict of stored versions, the one way every view reads it: the workspace the
 * version's file lives in (whichever way the packet arrived first), the project's
 * configured root, and the reports sent with the packet. From the cache unless `fresh`
 * (the thread page: reports change on disk); versions are loaded only for misses.
 */
export async function readVersionVerdicts(
  versionIds: readonly string[],
  options: { fresh?: boolean } = {},
): Promise<Map<string, VerdictReadingDto>> {
  const readings = new Map<string, VerdictReadingDto>();
  const misses: string[] = [];
  for (const id of new Set(versionIds)) {
    const cached = options.fresh ? undefined : peekVerdictCached(id);
    if (cached) readings.set(id, await cached);
    else misses.push(id);
  }
  if (!misses.length) return readings;
  const db = await database();
  const versions = await inChunks(misses, (ids) =>
    db.packetVersion.findMany({
      where: { id: { in: ids } },
      select: { id: true, canonicalJson: true, project: true, ...versionPlaceSelect, reports: attachedReportsSelect },
    }),
  );
  await Promise.all(
    versions.map(async (version) => {
      const canonical = JSON.parse(version.canonicalJson) as CanonicalPacket;
      const roots = workspaceRootsFor({ workspaceRoot: placeOf(version).workspaceRoot, project: version.project });
      const reading = await readVerdictCached(version.id, canonical.verdict_pointer, roots, {
        fresh: options.fresh,
        inlineVerdict: canonical.verdict,
        attached: attachedReportsOf(version.reports),
      });
      readings.set(version.id, reading);
    }),
  );
  return readings;
}
