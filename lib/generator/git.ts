import "server-only";
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** What the generator and the check need from git, read once per run. */
export interface GitState {
  repo: boolean;
  /** Why git could not be read, when `repo` is false. */
  reason?: string;
  /** The root's folder inside the repository, "" at its top or "sub/dir/" (git's own paths are relative to the top). */
  prefix: string;
  /** The repository's folder name and origin remote, for naming the project. */
  topName: string | null;
  originUrl: string | null;
  /** Full commit id of HEAD; null on a branch with no commits yet. */
  head: string | null;
  headTimeMs: number | null;
  /** Null when HEAD is detached. */
  branch: string | null;
  /** `git status` entries (two-letter code, path from the repository's top), sorted by path. */
  status: { code: string; path: string }[];
}

export interface GitChangedFile {
  path: string;
  change: "added" | "modified" | "deleted" | "type changed" | "unmerged";
  additions?: number;
  deletions?: number;
}

const NOT_A_REPO: Omit<GitState, "reason"> = {
  repo: false,
  prefix: "",
  topName: null,
  originUrl: null,
  head: null,
  headTimeMs: null,
  branch: null,
  status: [],
};

/**
 * Runs git without a shell. GIT_OPTIONAL_LOCKS=0 keeps `git status` from taking the
 * index lock, so a check never collides with the agent's own git commands.
 */
async function git(root: string, args: string[]): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run("git", args, {
      cwd: root,
      env: { ...process.env, GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C" },
      maxBuffer: 64 * 1024 * 1024,
      encoding: "utf8",
    });
    return { ok: true, stdout, stderr };
  } catch (error) {
    const failed = error as NodeJS.ErrnoException & { stdout?: string; stderr?: string };
    if (failed.code === "ENOENT" && failed.stdout === undefined) return { ok: false, stdout: "", stderr: "git is not installed" };
    return { ok: false, stdout: failed.stdout ?? "", stderr: failed.stderr ?? failed.message };
  }
}

export async function readGitState(root: string): Promise<GitState> {
  const inside = await git(root, ["rev-parse", "--show-prefix", "--show-toplevel"]);
  if (!inside.ok) {
    // git's own wording varies by version; the packet states the fact the same way everywhere.
    const reason = /not a git repository/i.test(inside.stderr) ? "not a git repository" : inside.stderr.trim().split("\n")[0];
    return { ...NOT_A_REPO, reason: reason || "not a git repository" };
  }
  const [prefix = "", top = ""] = inside.stdout.split("\n");
  const [head, branch, origin, status] = await Promise.all([
    git(root, ["show", "-s", "--format=%H %ct", "HEAD"]),
    git(root, ["symbolic-ref", "-q", "--short", "HEAD"]),
    git(root, ["config", "--get", "remote.origin.url"]),
    git(root, ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"]),
  ]);
  if (!status.ok) return { ...NOT_A_REPO, reason: `git status failed: ${status.stderr.trim()}` };
  const [sha, seconds] = head.ok ? head.stdout.trim().split(" ") : [];
  return {
    repo: true,
    prefix,
    topName: top ? path.basename(top) : null,
    originUrl: origin.ok ? origin.stdout.trim() || null : null,
    head: sha ?? null,
    headTimeMs: seconds ? Number(seconds) * 1000 : null,
    branch: branch.ok ? branch.stdout.trim() || null : null,
    status: parseStatus(status.stdout),
  };
}

/** Porcelain v1 with -z and --no-renames: "XY path\0" per entry. */
function parseStatus(output: string): GitState["status"] {
  return output
    .split("\0")
    .filter((entry) => entry.length > 3)
    .map((entry) => ({ code: entry.slice(0, 2), path: entry.slice(3) }))
    .sort((a, b) => compare(a.path, b.path));
}

/** Code-unit order, not locale order: the same bytes on every machine. */
export const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** True when `ancestor` is HEAD or one of its ancestors. */
export async function isAncestorOfHead(root: string, ancestor: string): Promise<boolean> {
  return (await git(root, ["merge-base", "--is-ancestor", ancestor, "HEAD"])).ok;
}

const CHANGE: Record<string, GitChangedFile["change"]> = { A: "added", M: "modified", D: "deleted", T: "type changed", U: "unmerged" };

/**
 * Files that differ between `base` and the working tree (commits since `base` and
 * uncommitted edits), plus untracked files, with line counts where git has them.
 */
export async function changedFilesSince(root: string, base: string, untracked: string[]): Promise<GitChangedFile[] | null> {
  const [names, counts] = await Promise.all([
    git(root, ["diff", "--no-renames", "--name-status", "-z", base, "--"]),
    git(root, ["diff", "--no-renames", "--numstat", "-z", base, "--"]),
  ]);
  if (!names.ok || !counts.ok) return null;
  const files = new Map<string, GitChangedFile>();
  const nameParts = names.stdout.split("\0");
  for (let i = 0; i + 1 < nameParts.length; i += 2) {
    const letter = nameParts[i]!.charAt(0);
    files.set(nameParts[i + 1]!, { path: nameParts[i + 1]!, change: CHANGE[letter] ?? "modified" });
  }
  for (const entry of counts.stdout.split("\0")) {
    const match = /^(\d+|-)\t(\d+|-)\t(.+)$/s.exec(entry);
    const file = match && files.get(match[3]!);
    // Binary files have "-" counts: no line numbers to give.
    if (file && match[1] !== "-") Object.assign(file, { additions: Number(match[1]), deletions: Number(match[2]) });
  }
  for (const file of untracked) if (!files.has(file)) files.set(file, { path: file, change: "added" });
  return [...files.values()].sort((a, b) => compare(a.path, b.path));
}

/**
 * The repository path a remote names: "git@github.com:acme/billing.git" and
 * "https://github.com/acme/billing" both name "acme/billing". A local path names none.
 */
export function projectFromRemote(url: string): string | null {
  const text = url.trim();
  let repoPath: string;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    try {
      const parsed = new URL(text);
      if (parsed.protocol === "file:") return null;
      repoPath = parsed.pathname;
    } catch {
      return null;
    }
  } else {
    const scp = /^[^/:]+:(?!\/\/)(.+)$/.exec(text); // user@host:path
    if (!scp) return null;
    repoPath = scp[1]!;
  }
  const name = repoPath.replace(/^\/+|\/+$/g, "").replace(/\.git$/, "");
  return name.includes("/") ? name : null;
}
