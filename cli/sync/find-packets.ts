import "server-only";
import { readdir, stat } from "node:fs/promises";
import path from "node:path";

async function walk(folder: string, accept: (name: string) => boolean, out: string[]): Promise<void> {
  const entries = await readdir(folder, { withFileTypes: true });
  entries.sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of entries) {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory() && entry.name !== "node_modules" && !entry.name.startsWith(".")) await walk(full, accept, out);
    else if (entry.isFile() && accept(entry.name)) out.push(full);
  }
}

/**
 * The files `baton push` sends for its arguments: a file as given; a folder's
 * every handoff.json below it, or, when it holds none, every .json file below it.
 */
export async function findPacketFiles(inputs: string[]): Promise<string[]> {
  const files: string[] = [];
  for (const input of inputs) {
    const info = await stat(input).catch(() => null);
    if (!info?.isDirectory()) {
      files.push(input);
      continue;
    }
    const handoffs: string[] = [];
    await walk(input, (name) => name === "handoff.json", handoffs);
    if (!handoffs.length) await walk(input, (name) => name.endsWith(".json"), handoffs);
    files.push(...handoffs);
  }
  return files;
}
