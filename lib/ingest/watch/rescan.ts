import "server-only";
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { handoffFileKind } from "./handoff-files";

async function walk(folder: string, found: string[]): Promise<void> {
  let entries;
  try {
    entries = await readdir(folder, { withFileTypes: true });
  } catch {
    return; // A folder removed or unreadable meanwhile: nothing to pick up there.
  }
  for (const entry of entries) {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory() && entry.name !== "node_modules" && !entry.name.startsWith(".")) await walk(full, found);
    else if (entry.isFile() && handoffFileKind(full) !== null) found.push(full);
  }
}

/**
 * The handoff files (handoff-files.ts) below `folders` whose size or modification time changed
 * since the last call (`seen` remembers them). A safety net under the file watcher,
 * which can miss a file written into a folder created a moment before.
 */
export async function findChangedHandoffs(folders: readonly string[], seen: Map<string, string>): Promise<string[]> {
  const files: string[] = [];
  for (const folder of folders) await walk(folder, files);
  const changed: string[] = [];
  for (const file of files) {
    const info = await stat(file).catch(() => null);
    if (!info) continue;
    const signature = `${info.mtimeMs}:${info.size}`;
    if (seen.get(file) !== signature) {
      seen.set(file, signature);
      changed.push(file);
    }
  }
  return changed;
}
