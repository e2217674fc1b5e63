import "server-only";
import { database, sqlExecutor } from "../../db/client";
import { Prisma } from "../../generated/prisma/client";
import { inChunks } from "../../db/sql";
import type { CanonicalPacket } from "../../contract/canonical";
import type { VerdictPointer } from "./read";
import { peekVerdictCached, readVerdictCached, verdictPlaceKey } from "./cache";
import type { VerdictReadingDto } from "./dto";
import { attachedReportsOf, placeOf, versionPlaceSelect, workspaceRootsFor, type VersionPlaceRow } from "./roots";
import { config } from "../../server/config";

/**
 * The verdict of stored versions, the one way every view reads it: the workspace the
 * version's file lives in (whichever way the packet arrived first), the project's
 * configured root, and the reports sent with the packet. From the cache unless `fresh`
 * (the thread page: reports change on disk) or the version's place changed; pointers are
 * loaded only for misses.
 */
export async function readVersionVerdicts(
  versionIds: readonly string[],
  options: { fresh?: boolean } = {},
): Promise<Map<string, VerdictReadingDto>> {
  const ids = [...new Set(versionIds)];
  if (!ids.length) return new Map();
  const db = await database();
  // Where each version is read from is checked every time: its file may have been found
  // since (by another instance too), which makes a cached reading stale.
  const places = await inChunks(ids, (chunk) =>
    db.packetVersion.findMany({ where: { id: { in: chunk } }, select: { id: true, project: true, ...versionPlaceSelect, reports: { select: { ref: true } } } }),
  );
  return readVerdictsAt(
    places.map((version) => ({ ...version, reportRefs: version.reports.map((report) => report.ref) })),
    options,
  );
}

/** Where a version's verdict is read from, as read now (readVersionVerdicts, or the board's card rows: lib/board/card-rows.ts). */
export interface VersionPlace extends VersionPlaceRow {
  id: string;
  project: string | null;
  /** The refs of the reports sent with the packet. */
  reportRefs: readonly string[];
}

/** The verdicts of versions whose places were just read; pointers are loaded only for misses. */
export async function readVerdictsAt(places: readonly VersionPlace[], options: { fresh?: boolean } = {}): Promise<Map<string, VerdictReadingDto>> {
  const readings = new Map<string, VerdictReadingDto>();
  const misses: { id: string; roots: string[] }[] = [];
  const configuredRoots = config().BATON_WORKSPACE_ROOTS;
  for (const version of places) {
    if (readings.has(version.id)) continue;
    const roots = workspaceRootsFor({ workspaceRoot: placeOf(version).workspaceRoot, project: version.project }, configuredRoots);
    const refs = new Map(version.reportRefs.map((ref) => [ref, ""]));
    const cached = options.fresh ? undefined : peekVerdictCached(version.id, verdictPlaceKey(roots, refs));
    if (cached) readings.set(version.id, await cached);
    else misses.push({ id: version.id, roots });
  }
  if (!misses.length) return readings;
  const rootsOf = new Map(misses.map((miss) => [miss.id, miss.roots]));
  // Raw statements (a new version is always a miss: every placement of a fresh packet reads here).
  const sql = await sqlExecutor();
  const ids = misses.map((miss) => miss.id);
  const [versions, reports] = await Promise.all([
    inChunks(ids, (chunk) => sql.query<{ id: string; canonicalJson: string }>(Prisma.sql`SELECT "id", "canonicalJson" FROM "PacketVersion" WHERE "id" IN (${Prisma.join(chunk)})`)),
    inChunks(ids, (chunk) =>
      sql.query<{ versionId: string; ref: string; json: string }>(Prisma.sql`SELECT "versionId", "ref", "json" FROM "PacketReport" WHERE "versionId" IN (${Prisma.join(chunk)})`),
    ),
  ]);
  const reportsOf = new Map<string, { ref: string; json: string }[]>();
  for (const report of reports) {
    const list = reportsOf.get(report.versionId) ?? [];
    list.push(report);
    reportsOf.set(report.versionId, list);
  }
  await Promise.all(
    versions.map(async (version) => {
      const canonical = JSON.parse(version.canonicalJson) as CanonicalPacket;
      const reading = await readVerdictCached(version.id, canonical.verdict_pointer, rootsOf.get(version.id)!, {
        fresh: options.fresh,
        inlineVerdict: canonical.verdict,
        attached: attachedReportsOf(reportsOf.get(version.id) ?? []),
      });
      readings.set(version.id, reading);
    }),
  );
  return readings;
}

/**
 * A version just stored, read from the packet in hand (ingest): the ingest answer's flags
 * and the board's next delta then find its reading in the cache, instead of loading and
 * parsing its canonical JSON again (work that grew with the packet's size, on every
 * packet). The same inputs as readVersionVerdicts; a place recorded later is a miss there.
 */
export function primeNewVersionVerdict(
  versionId: string,
  stored: {
    project: string | null;
    sourcePath: string | null;
    workspaceRoot: string | null;
    pointers: readonly VerdictPointer[] | undefined;
    inlineVerdict: CanonicalPacket["verdict"];
    attached: readonly { ref: string; json: string }[];
  },
): void {
  const place = placeOf({ sourcePath: stored.sourcePath, workspaceRoot: stored.workspaceRoot, location: null });
  const roots = workspaceRootsFor({ workspaceRoot: place.workspaceRoot, project: stored.project });
  // A failed reading is not cached (readVerdictCached); the next read tries again.
  readVerdictCached(versionId, stored.pointers, roots, { inlineVerdict: stored.inlineVerdict, attached: attachedReportsOf(stored.attached) }).catch(() => undefined);
}
