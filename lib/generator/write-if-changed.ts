import "server-only";
import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import { writeFileAtomic } from "../server/fs/atomic-write";

/**
 * Writes atomically, and only when the bytes differ: a second identical run
 * leaves the file (and its mtime) alone, so a folder watcher sees nothing new.
 */
export async function writeIfChanged(file: string, text: string): Promise<boolean> {
  const current = await readFile(file, "utf8").catch(() => null);
  if (current === text) return false;
  await mkdir(path.dirname(file), { recursive: true });
  await writeFileAtomic(file, text);
  return true;
}

/** The one JSON layout the workbench commands write: 2-space indent, final newline. */
export const jsonText = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
