import "server-only";
import path from "node:path";
import { canonicalJson, sha256Hex } from "../contract/canonical-json";
import { preparePacket } from "../contract/prepare";
import { parseProducerTimestamp } from "../contract/timestamps";
import { renderHandoffMarkdown } from "../views/markdown/render-handoff";
import { BatonError } from "../core/errors";
import { buildPacket, type PacketInputs } from "./build-packet";
import { checkWorkbench, isWorkbenchArtifact, type CheckResult } from "./check";
import { changedFilesSince, isAncestorOfHead, projectFromRemote, type GitState } from "./git";
import { HANDOFF_FILE, previousPacket, readEarlierPackets, supersedeEarlier, type EarlierPacket } from "./handoffs";
import type { Workbench } from "./read";
import { pathSegment, WORKBENCH_PATHS, type CleanStateProblem } from "./schemas";
import { jsonText, writeIfChanged } from "./write-if-changed";

export interface GenerateOptions {
  root: string;
  taskId?: string;
  sessionId?: string;
  /** ISO-8601; else derived from the inputs. */
  createdAt?: string;
  agent?: string;
  expectedBranch?: string;
  k: number;
  allowDirty: boolean;
}

export type GenerateResult =
  | { refused: true; problems: CleanStateProblem[]; cleanStatePath: string }
  | {
      refused: false;
      problems: CleanStateProblem[];
      cleanStatePath: string;
      packet: Record<string, unknown>;
      threadKey: string;
      /** Absolute paths, and whether each was rewritten (false: the same bytes were already there). */
      files: { path: string; written: boolean }[];
      superseded: string[];
      notes: string[];
    };

/** Check, then build and write outputs/handoff/<session_id>/handoff.json and handoff.md. */
export async function generateHandoff(options: GenerateOptions): Promise<GenerateResult> {
  const root = path.resolve(options.root);
  const checked = await checkWorkbench(root, { taskId: options.taskId, expectedBranch: options.expectedBranch });
  const { bench, git, problems, cleanStatePath } = checked;
  if (problems.length && !options.allowDirty) return { refused: true, problems, cleanStatePath };

  const createdAtMs = options.createdAt !== undefined ? parseCreatedAt(options.createdAt) : newestInputMs(bench, git);
  const earlier = await readEarlierPackets(root);
  const base = {
    bench,
    git,
    sessionId: "",
    createdAt: createdAtMs === null ? null : new Date(createdAtMs).toISOString(),
    project: bench.featureList?.project?.trim() || (git.originUrl && projectFromRemote(git.originUrl)) || git.topName || path.basename(root),
    // As the state wrote it: a string, or {name, kind?, model?}.
    agent: options.agent ?? bench.state?.agent ?? null,
    problems,
    k: options.k,
  };
  // The thread is known before the previous packet is: it depends on project, branch and task only.
  const threadKey = preparePacket(buildPacket({ ...base, lastKnownGoodCommit: null, changedFiles: null, notes: [] }), 0).threadKey;
  const previous = previousPacket(earlier.packets, threadKey, createdAtMs);
  const changed = await collectChangedFiles(checked, previous);
  const notes = workbenchNotes(bench, git, changed.note, earlier.skipped);
  const inputs: PacketInputs = { ...base, lastKnownGoodCommit: lastKnownGood(checked, previous), changedFiles: changed.files, notes };

  const packet = buildPacket(inputs);
  packet.session_id = options.sessionId !== undefined ? sessionSegment(options.sessionId) : deriveSessionId(packet, inputs.createdAt);
  const prepared = preparePacket(packet, createdAtMs ?? 0);
  const sessionId = String(packet.session_id);
  const dir = path.join(root, WORKBENCH_PATHS.handoffDir, sessionId);
  const markdown = renderHandoffMarkdown({ canonical: prepared.canonical, flags: prepared.flags, threadKey: prepared.threadKey });
  const files = [
    { path: path.join(dir, HANDOFF_FILE), written: await writeIfChanged(path.join(dir, HANDOFF_FILE), jsonText(packet)) },
    { path: path.join(dir, "handoff.md"), written: await writeIfChanged(path.join(dir, "handoff.md"), markdown) },
  ];
  // After the new packet is on disk, so a folder watcher never sees the thread without an active packet.
  const superseded = await supersedeEarlier(earlier.packets, prepared.threadKey, { sessionId, createdAtMs });
  return { refused: false, problems, cleanStatePath, packet, threadKey: prepared.threadKey, files, superseded, notes };
}

function parseCreatedAt(value: string): number {
  const ms = parseProducerTimestamp(value);
  if (ms === null) throw new BatonError("invalid_request", `--created-at ${JSON.stringify(value)} is not an ISO-8601 time or epoch seconds.`);
  return ms;
}

/**
 * created_at when none is given: the newest input time (a read file's mtime, the end
 * of the last feedback record, the HEAD commit). The generator's own outputs are not
 * inputs, so a rerun derives the same time.
 */
function newestInputMs(bench: Workbench, git: GitState): number | null {
  const times = [...bench.mtimesMs, ...(git.headTimeMs !== null ? [git.headTimeMs] : [])];
  for (const { record } of bench.feedback?.records ?? []) {
    const started = record.started_at != null ? parseProducerTimestamp(record.started_at) : null;
    if (started !== null) times.push(started + (record.duration_ms ?? 0));
  }
  return times.length ? Math.max(...times) : null;
}

/** `sess-<created_at>-<hash of the packet's content>`: readable, sortable, and the same for the same inputs. */
function deriveSessionId(packet: Record<string, unknown>, createdAt: string | null): string {
  const hash = sha256Hex(canonicalJson({ ...packet, session_id: undefined }));
  if (createdAt === null) return `sess-${hash.slice(0, 16)}`;
  return `sess-${createdAt.replace(/\.\d+Z$/, "Z").replace(/[-:]/g, "")}-${hash.slice(0, 10)}`;
}

function sessionSegment(value: string): string {
  const parsed = pathSegment.safeParse(value);
  if (!parsed.success) throw new BatonError("invalid_request", `--session-id ${JSON.stringify(value)} cannot name a folder: ${parsed.error.issues[0]?.message}.`);
  return parsed.data;
}

/**
 * The last commit whose checks passed: the verification's head_commit when it
 * passed; HEAD when it passed without naming one and the tree is clean (so the
 * verified files are HEAD's); else what the previous packet of the thread said.
 */
function lastKnownGood({ bench, git, problems }: CheckResult, previous: EarlierPacket | null): string | null {
  const passed = bench.verification?.passed === true;
  if (passed && bench.verification?.head_commit) return bench.verification.head_commit;
  if (passed && git.head && !problems.some((problem) => problem.check === "working_tree")) return git.head;
  const carried = previous?.received.last_known_good_commit;
  return typeof carried === "string" && carried.trim() ? carried : null;
}

/**
 * changed_files, from the first source that has them: outputs/diff_summary.json;
 * git, since the previous packet's head_commit (else uncommitted changes only);
 * agent_state.json's touched_files.
 */
async function collectChangedFiles(
  { bench, git }: CheckResult,
  previous: EarlierPacket | null,
): Promise<{ files: PacketInputs["changedFiles"]; note: string | null }> {
  if (bench.diffSummary) return { files: bench.diffSummary.touched, note: null };
  const touched = bench.state?.touched_files ?? [];
  if (git.repo && git.head) {
    const since = typeof previous?.received.head_commit === "string" ? previous.received.head_commit : null;
    const base = since && (await isAncestorOfHead(bench.root, since)) ? since : "HEAD";
    const untracked = git.status.filter((entry) => entry.code === "??").map((entry) => entry.path);
    const files = (await changedFilesSince(bench.root, base, untracked))?.filter((file) => !isWorkbenchArtifact(file.path, git.prefix));
    if (files && (files.length || base !== "HEAD" || !touched.length)) {
      const note = base === "HEAD" ? "changed_files: uncommitted changes only (no earlier packet of this thread records where the session started)" : null;
      return { files, note };
    }
  }
  if (bench.state) return { files: touched, note: "changed_files: as agent_state.json's touched_files" };
  return { files: null, note: "changed_files: no diff_summary.json, git diff or touched_files to take them from" };
}

function workbenchNotes(bench: Workbench, git: GitState, changedNote: string | null, skipped: string[]): string[] {
  const notes = bench.missing.map((file) => `${file} not found`);
  if (!bench.taskId) notes.push("no task id: pass --task, or set active_task_id in agent_state.json");
  for (const [kind, report] of [["verification", bench.verification], ["review", bench.review]] as const) {
    if (report?.task_id && report.task_id !== bench.taskId) notes.push(`the ${kind} report names task ${report.task_id}, not ${bench.taskId}`);
  }
  for (const { line, problem } of bench.feedback?.malformed ?? []) notes.push(`${WORKBENCH_PATHS.feedback} line ${line} skipped: ${problem}`);
  if (!git.repo) notes.push(`no git information: ${git.reason ?? "not a git repository"}`);
  if (changedNote) notes.push(changedNote);
  for (const file of skipped) notes.push(`${file} is not a readable packet; left as it is`);
  return notes;
}
