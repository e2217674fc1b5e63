import "server-only";
import path from "node:path";
import { config } from "../../server/config";
import { BatonError } from "../../core/errors";

export interface ThreadRootSource {
  /** Recorded at ingest for a watched-folder packet (the folder holding `outputs/`). */
  workspaceRoot: string | null;
  /** The packet's project, looked up in BATON_WORKSPACE_ROOTS. */
  project: string | null;
}

/**
 * Where a version's file lives: its own when it came from a watched folder, else the one
 * recorded when its file appeared later (docs/decisions/050-one-location-per-packet.md).
 */
export const versionPlaceSelect = {
  source: true,
  sourcePath: true,
  workspaceRoot: true,
  location: { select: { sourcePath: true, workspaceRoot: true } },
} as const;

export interface VersionPlaceRow {
  sourcePath: string | null;
  workspaceRoot: string | null;
  location: { sourcePath: string; workspaceRoot: string } | null;
}

export function placeOf(version: VersionPlaceRow): { sourcePath: string | null; workspaceRoot: string | null } {
  if (version.sourcePath) return { sourcePath: version.sourcePath, workspaceRoot: version.workspaceRoot };
  return { sourcePath: version.location?.sourcePath ?? null, workspaceRoot: version.location?.workspaceRoot ?? null };
}

/** A version's attached reports (PacketReport rows) as the verdict reader takes them. */
export function attachedReportsOf(rows: readonly { ref: string; json: string }[]): ReadonlyMap<string, string> {
  return new Map(rows.map((row) => [row.ref, row.json]));
}

const EXPECTED = "a comma-separated list of project=/abs/path pairs, e.g. BATON_WORKSPACE_ROOTS=billing=/srv/billing";

/**
 * BATON_WORKSPACE_ROOTS entries (`project=path`) as project → absolute path.
 * Every entry is checked, not only the thread's, so a typo anywhere is reported.
 */
export function parseWorkspaceRoots(entries: readonly string[]): Map<string, string> {
  const roots = new Map<string, string>();
  entries.forEach((entry, index) => {
    const at = `BATON_WORKSPACE_ROOTS entry ${index + 1} (${JSON.stringify(entry)})`;
    const equals = entry.indexOf("=");
    if (equals < 0) throw invalid(`${at} has no "="`);
    const project = entry.slice(0, equals).trim();
    const root = entry.slice(equals + 1).trim();
    if (!project) throw invalid(`${at} has no project before "="`);
    if (!root) throw invalid(`${at} has no path after "="`);
    if (root.includes("\0")) throw invalid(`${at} has a NUL byte in its path`);
    if (roots.has(project)) throw invalid(`${at} names project "${project}" a second time`);
    roots.set(project, path.resolve(root));
  });
  return roots;
}

/**
 * The folders a thread's verdict pointers may be read from, in the order they are
 * tried: the recorded workspace root first, then the project's configured root.
 */
export function workspaceRootsFor(
  thread: ThreadRootSource,
  entries: readonly string[] = config().BATON_WORKSPACE_ROOTS,
): string[] {
  const configured = parseWorkspaceRoots(entries);
  const roots: string[] = [];
  if (thread.workspaceRoot) roots.push(path.resolve(thread.workspaceRoot));
  const projectRoot = thread.project ? configured.get(thread.project.trim()) : undefined;
  if (projectRoot && !roots.includes(projectRoot)) roots.push(projectRoot);
  return roots;
}

function invalid(problem: string): BatonError {
  return new BatonError("internal", `${problem}: BATON_WORKSPACE_ROOTS must be ${EXPECTED}.`, {
    variable: "BATON_WORKSPACE_ROOTS",
    expected: "project=/abs/path",
  });
}
