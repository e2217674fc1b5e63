import "server-only";
import path from "node:path";

/**
 * The file names a watched folder is scanned for (docs/contract.md#from-body-to-stored-version):
 * `handoff.json`, and Markdown handoffs: `handoff.md` or `handover.md` in any case
 * (`HANDOFF.md`, `HANDOVER.md`), and any `.md` below `thoughts/shared/handoffs/`, where
 * HumanLayer's create_handoff saves them.
 */
export type HandoffFileKind = "json" | "markdown";

const MARKDOWN_NAMES = new Set(["handoff.md", "handover.md"]);
const HANDOFFS_FOLDER = ["thoughts", "shared", "handoffs"];

export function handoffFileKind(file: string): HandoffFileKind | null {
  const name = path.basename(file);
  if (name === "handoff.json") return "json";
  if (MARKDOWN_NAMES.has(name.toLowerCase())) return "markdown";
  if (!name.toLowerCase().endsWith(".md")) return null;
  const parts = path.dirname(file).split(path.sep);
  for (let i = 0; i + HANDOFFS_FOLDER.length <= parts.length; i++) {
    if (HANDOFFS_FOLDER.every((part, j) => parts[i + j] === part)) return "markdown";
  }
  return null;
}
