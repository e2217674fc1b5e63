import "server-only";
import fs from "node:fs/promises";
import path from "node:path";
import { isInside } from "../../server/fs/inside";

/** Why a verdict pointer path is not read, in words a person can read. */
export const REFUSAL = {
  empty: "empty path",
  tooLong: "path is too long",
  nul: "contains a NUL byte",
  control: "contains control characters",
  absolute: "absolute path",
  backslash: "contains a backslash",
  percent: "percent-encoded",
  dotDot: "leaves the workspace root (..)",
  symlinkOutside: "symlink points outside the workspace root",
  symlinkBroken: "broken symlink",
  symlinkLoop: "symlink loop",
  hardLink: "the file has more than one hard link (a link can name a file outside the workspace)",
} as const;

export const MISSING = {
  file: "no such file in the workspace root",
  root: "workspace root does not exist",
} as const;

export const REF_MAX_LENGTH = 1024;

export type RefCheck = { ok: true } | { ok: false; reason: string };

export type SafePathResult =
  | { ok: true; path: string; root: string }
  | { ok: false; code: "refused" | "missing" | "unreadable"; reason: string };

// C0, DEL, C1, and the Unicode bidi/format controls that can disguise a path on screen.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
const WINDOWS_DRIVE = /^[a-zA-Z]:/;
const PERCENT_ESCAPE = /%[0-9a-fA-F]{2}/;

/** The checks that need no file system: run before anything touches the disk. */
export function checkRef(ref: string): RefCheck {
  if (ref.trim() === "") return { ok: false, reason: REFUSAL.empty };
  if (ref.length > REF_MAX_LENGTH) return { ok: false, reason: REFUSAL.tooLong };
  if (ref.includes("\0")) return { ok: false, reason: REFUSAL.nul };
  if (CONTROL.test(ref)) return { ok: false, reason: REFUSAL.control };
  if (ref.startsWith("/") || ref.startsWith("\\") || WINDOWS_DRIVE.test(ref)) {
    return { ok: false, reason: REFUSAL.absolute };
  }
  if (ref.includes("\\")) return { ok: false, reason: REFUSAL.backslash };
  if (PERCENT_ESCAPE.test(ref)) return { ok: false, reason: REFUSAL.percent };
  if (ref.split("/").includes("..")) return { ok: false, reason: REFUSAL.dotDot };
  return { ok: true };
}

/** True when `child` is `parent` or below it (both absolute, already resolved). */
export { isInside };

/**
 * Where `ref` points inside `root`, with every symlink resolved, or why it may not
 * be read. Nothing is opened or read here; only realpath and lstat touch the disk,
 * and only after the path itself has passed `checkRef`.
 */
export async function resolveInsideRoot(root: string, ref: string): Promise<SafePathResult> {
  const check = checkRef(ref);
  if (!check.ok) return { ok: false, code: "refused", reason: check.reason };
  const absoluteRoot = path.resolve(root);
  const candidate = path.resolve(absoluteRoot, ref);
  if (!isInside(absoluteRoot, candidate)) return { ok: false, code: "refused", reason: REFUSAL.dotDot };

  let realRoot: string;
  try {
    realRoot = await fs.realpath(absoluteRoot);
  } catch (error) {
    if (isMissingError(error)) return { ok: false, code: "missing", reason: MISSING.root };
    return unreadable(error);
  }

  let realTarget: string;
  try {
    realTarget = await fs.realpath(candidate);
  } catch (error) {
    if (errorCode(error) === "ELOOP") return { ok: false, code: "refused", reason: REFUSAL.symlinkLoop };
    if (isMissingError(error)) return explainMissing(absoluteRoot, realRoot, candidate);
    return unreadable(error);
  }
  if (!isInside(realRoot, realTarget)) return { ok: false, code: "refused", reason: REFUSAL.symlinkOutside };
  return { ok: true, path: realTarget, root: realRoot };
}

/**
 * The target does not resolve. Say "missing" only when the deepest part of the path
 * that does exist is a real folder inside the root: otherwise a symlinked folder
 * pointing out would tell a caller which files exist outside the root.
 */
async function explainMissing(absoluteRoot: string, realRoot: string, candidate: string): Promise<SafePathResult> {
  // Walks up from the target. (A while loop: the production bundler lost the `path`
  // import inside a for-loop's update clause, "path is not defined" at run time.)
  let current = candidate;
  while (current !== absoluteRoot && isInside(absoluteRoot, current)) {
    const here = current;
    current = path.dirname(current);
    try {
      await fs.lstat(here);
    } catch (error) {
      if (isMissingError(error)) continue;
      return unreadable(error);
    }
    let real: string;
    try {
      real = await fs.realpath(here);
    } catch (error) {
      const code = errorCode(error);
      if (code === "ELOOP") return { ok: false, code: "refused", reason: REFUSAL.symlinkLoop };
      if (isMissingError(error)) return { ok: false, code: "refused", reason: REFUSAL.symlinkBroken };
      return unreadable(error);
    }
    if (!isInside(realRoot, real)) return { ok: false, code: "refused", reason: REFUSAL.symlinkOutside };
    return { ok: false, code: "missing", reason: MISSING.file };
  }
  return { ok: false, code: "missing", reason: MISSING.file };
}

export function errorCode(error: unknown): string | undefined {
  return error instanceof Error && "code" in error && typeof error.code === "string" ? error.code : undefined;
}

function isMissingError(error: unknown): boolean {
  const code = errorCode(error);
  return code === "ENOENT" || code === "ENOTDIR";
}

function unreadable(error: unknown): SafePathResult {
  const code = errorCode(error);
  const reason = code === "EACCES" || code === "EPERM" ? "permission denied" : `cannot be read (${code ?? "unknown error"})`;
  return { ok: false, code: "unreadable", reason };
}
