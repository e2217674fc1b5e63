import "server-only";
import path from "node:path";

/**
 * The workspace root of a watched handoff file: the folder holding `outputs/`
 * (verdict pointers are relative to it). For a file outside any `outputs/`
 * folder, its own folder.
 */
export function workspaceRootOf(filePath: string): string {
  const absolute = path.resolve(filePath);
  const parts = absolute.split(path.sep);
  const index = parts.lastIndexOf("outputs", parts.length - 2);
  if (index > 0) return parts.slice(0, index).join(path.sep) || path.sep;
  return path.dirname(absolute);
}
