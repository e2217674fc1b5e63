import "server-only";
import path from "node:path";
import { BatonError } from "../core/errors";
import { readRegularFile } from "../server/fs/read-regular-file";

/**
 * `.batonignore` in the workspace root (docs/decisions/054-check-allow-list.md): paths the
 * clean-state check does not count, for files a workbench's own tools leave behind (an
 * init script's `init_report.json`). One pattern a line, relative to the root; `#` starts a
 * comment; `*` matches within a path segment, `**` across segments; a trailing `/` names a
 * folder and everything in it.
 */
export const ALLOW_LIST_FILE = ".batonignore";
const ALLOW_LIST_MAX_BYTES = 64 * 1024;

export interface AllowList {
  patterns: string[];
  /** Whether a path relative to the workspace root (with `/`) is allowed. */
  allows(relativePath: string): boolean;
}

function patternRegExp(pattern: string): RegExp {
  const folder = pattern.endsWith("/");
  const body = pattern
    .replace(/^\/+|\/+$/g, "")
    .split(/(\*\*\/?|\*|\?)/)
    .map((part) => (part === "**" || part === "**/" ? ".*" : part === "*" ? "[^/]*" : part === "?" ? "[^/]" : part.replace(/[.+^${}()|[\]\\]/g, "\\$&")))
    .join("");
  return new RegExp(`^${body}${folder ? "/.*" : "(/.*)?"}$`);
}

export function parseAllowList(text: string): AllowList {
  const patterns = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith("#"));
  const expressions = patterns.map(patternRegExp);
  return { patterns, allows: (relativePath) => expressions.some((expression) => expression.test(relativePath)) };
}

export async function readAllowList(root: string): Promise<AllowList> {
  const reading = await readRegularFile(path.join(root, ALLOW_LIST_FILE), { maxBytes: ALLOW_LIST_MAX_BYTES });
  if (reading.kind === "missing") return parseAllowList("");
  if (reading.kind === "ok") return parseAllowList(reading.bytes.toString("utf8"));
  const why = reading.kind === "too_large" ? `it is larger than ${ALLOW_LIST_MAX_BYTES} bytes` : reading.reason;
  throw new BatonError("invalid_request", `${ALLOW_LIST_FILE} was not read: ${why}.`, { file: ALLOW_LIST_FILE });
}

/** Said with a refusal caused by files left in the tree: how to allow them. */
export const ALLOW_LIST_HINT = `to allow files the workbench's own tools leave behind, list them in ${ALLOW_LIST_FILE} in the workspace root, one path or pattern a line (e.g. init_report.json, logs/)`;
