import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

/**
 * For tests: workbenches built in a temp folder, with fixed file times and, where
 * git matters, a repository whose commits have fixed authors and dates, so the
 * generated packets are the same bytes on every run and every machine.
 */

export const FILE_TIME = new Date("2026-11-20T09:00:00Z");
export const COMMIT_TIME = "2026-11-20T08:00:00Z";

export interface TestWorkbench {
  base: string;
  /** `<base>/workbench`: a fixed folder name, so nothing derived from it varies. */
  root: string;
  write(relative: string, content: string | object, time?: Date): Promise<string>;
  git(...args: string[]): string;
  commit(message: string, date?: string): string;
  remove(): Promise<void>;
}

export async function makeTestWorkbench(options: { git?: boolean } = {}): Promise<TestWorkbench> {
  const base = await mkdtemp(path.join(tmpdir(), "baton-workbench-"));
  const root = path.join(base, "workbench");
  await mkdir(root);
  const git = (...args: string[]) =>
    execFileSync("git", args, {
      cwd: root,
      encoding: "utf8",
      // No user or system config: their signing, hooks or templates would change the commits.
      env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1", GIT_AUTHOR_DATE: COMMIT_TIME, GIT_COMMITTER_DATE: COMMIT_TIME },
    });
  if (options.git) {
    git("init", "-q", "-b", "main");
    git("config", "user.name", "Fixture Agent");
    git("config", "user.email", "agent@example.com");
  }
  const rewrites = new Map<string, number>();
  return {
    base,
    root,
    async write(relative, content, time) {
      const file = path.join(root, relative);
      // A rewrite gets a later time: with equal times, git's stat check would miss a same-sized edit.
      const writes = (rewrites.get(file) ?? -1) + 1;
      rewrites.set(file, writes);
      time ??= new Date(FILE_TIME.getTime() + writes * 1000);
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, typeof content === "string" ? content : `${JSON.stringify(content, null, 2)}\n`);
      await utimes(file, time, time);
      return file;
    },
    git,
    commit(message, date = COMMIT_TIME) {
      git("add", "-A", "--", ".", ":!outputs", ":!agent_state.json", ":!feedback_record.jsonl");
      execFileSync("git", ["commit", "-q", "-m", message], {
        cwd: root,
        env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1", GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date },
      });
      return git("rev-parse", "HEAD").trim();
    },
    remove: () => rm(base, { recursive: true, force: true }),
  };
}

export const jsonl = (lines: (object | string)[]) => `${lines.map((line) => (typeof line === "string" ? line : JSON.stringify(line))).join("\n")}\n`;

export function featureList(active: string, features: { id: string; status: string }[] = [{ id: active, status: "in_progress" }]) {
  return {
    project: "acme/billing",
    active,
    features: features.map((feature) => ({ ...feature, goal: `deliver ${feature.id}`, done_when: "its acceptance test passes" })),
  };
}

export function review(taskId: string, total: number, verdict: string, assumptions: number) {
  return {
    task_id: taskId,
    total,
    verdict,
    dimensions: [
      { name: "problem_fit", score: 2, note: "" },
      { name: "scope_discipline", score: 2, note: "" },
      { name: "assumptions", score: assumptions, note: assumptions < 2 ? "not checked against the data" : "" },
      { name: "verification_quality", score: Math.min(2, Math.max(0, total - 6)), note: "" },
      { name: "handoff_readiness", score: 2, note: "" },
    ],
  };
}

export function agentState(taskId: string, extra: Record<string, unknown> = {}) {
  return {
    schema_version: 1,
    active_task_id: taskId,
    touched_files: ["src/invoice.ts", "src/invoice.test.ts"],
    assumptions: ["invoice totals are stored in cents"],
    blockers: [],
    next_action: `open a pull request for ${taskId} and ask the billing team to review it`,
    questions: [],
    agent: "builder-7",
    ...extra,
  };
}

export const passingTests = (started = "2026-11-20T08:30:00Z") => ({
  command: "npm test",
  exit_code: 0,
  duration_ms: 8200,
  started_at: started,
  stdout_tail: "Tests: 42 passed, 42 total",
});
