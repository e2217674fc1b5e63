import { readdir, readFile, rm, stat } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BatonError } from "../core/errors";
import { NEXT_ACTION_SENTINEL } from "../contract/normalise";
import { validatePacket } from "../contract/validate";
import { expectGolden } from "@/testing/generator/golden";
import { generateHandoff, type GenerateOptions, type GenerateResult } from "./generate";
import { buildSupersedingScenario, earlierPacket, SCENARIOS } from "@/testing/generator/scenarios";
import { agentState, jsonl, makeTestWorkbench, passingTests, type TestWorkbench } from "@/testing/generator/workbench";

const benches: TestWorkbench[] = [];
afterEach(async () => {
  await Promise.all(benches.splice(0).map((bench) => bench.remove()));
});
const track = <T extends { remove(): Promise<void> }>(bench: T) => {
  benches.push(bench as unknown as TestWorkbench);
  return bench;
};

async function generate(root: string, options: Partial<GenerateOptions> = {}) {
  const result = await generateHandoff({ root, k: 5, allowDirty: false, ...options });
  if (result.refused) throw new Error(`refused: ${result.problems.map((problem) => problem.detail).join("; ")}`);
  return result;
}

type Written = Extract<GenerateResult, { refused: false }>;
const handoffDir = (result: Written) => path.dirname(result.files[0]!.path);
const read = (file: string) => readFile(file, "utf8");

/** Every file under outputs/, with its bytes and mtime: what "identical runs" compares. */
async function snapshotOutputs(root: string): Promise<Record<string, { text: string; mtimeMs: number }>> {
  const out: Record<string, { text: string; mtimeMs: number }> = {};
  const entries = await readdir(path.join(root, "outputs"), { recursive: true, withFileTypes: true });
  for (const entry of entries.filter((item) => item.isFile())) {
    const file = path.join(entry.parentPath, entry.name);
    out[path.relative(root, file)] = { text: await read(file), mtimeMs: (await stat(file)).mtimeMs };
  }
  return out;
}

describe("golden packets", () => {
  for (const scenario of SCENARIOS) {
    it(`${scenario.name}: handoff.json, handoff.md and clean_state.json match their golden files`, async () => {
      const bench = track(await scenario.build());
      const result = await generate(bench.root, { k: scenario.k ?? 5, allowDirty: scenario.allowDirty ?? false });
      const json = await read(result.files[0]!.path);
      await expectGolden(scenario.name, "handoff.json", json);
      await expectGolden(scenario.name, "handoff.md", await read(result.files[1]!.path));
      await expectGolden(scenario.name, "clean_state.json", await read(result.cleanStatePath));
      // The contract's own validator accepts it; the folder is named after the session.
      expect(() => validatePacket(JSON.parse(json))).not.toThrow();
      expect(path.basename(handoffDir(result))).toBe(result.packet.session_id);
      expect(result.packet.session_id).toMatch(/^sess-20261120T090000Z-[0-9a-f]{10}$/);
    });
  }

  it("superseding: marks the thread's earlier packet superseded, keeps the rest of it, and leaves other threads alone", async () => {
    const { bench, firstCommit } = await buildSupersedingScenario();
    track(bench);
    const other = path.join(bench.root, "outputs/handoff/sess-other/handoff.json");
    const notAPacket = path.join(bench.root, "outputs/handoff/notes/handoff.json");
    const [otherBefore, notAPacketBefore] = [await read(other), await read(notAPacket)];

    const result = await generate(bench.root);
    await expectGolden("superseding", "handoff.json", await read(result.files[0]!.path));
    await expectGolden("superseding", "handoff.md", await read(result.files[1]!.path));
    const earlierFile = path.join(bench.root, "outputs/handoff/sess-earlier/handoff.json");
    await expectGolden("superseding", "earlier-handoff.json", await read(earlierFile));

    expect(result.superseded).toEqual([earlierFile]);
    const earlier = JSON.parse(await read(earlierFile)) as Record<string, unknown>;
    expect(earlier).toEqual({ ...earlierPacket(firstCommit), status: "superseded" });
    expect(Object.keys(earlier)).toEqual(Object.keys(earlierPacket(firstCommit)));
    expect(await read(other)).toBe(otherBefore);
    expect(await read(notAPacket)).toBe(notAPacketBefore);
    expect(result.notes).toContain("outputs/handoff/notes/handoff.json is not a readable packet; left as it is");

    // Verification failed: the last known good commit carries over from the earlier packet,
    // and the changed files are the diff since the commit that packet ended at.
    expect(result.packet.last_known_good_commit).toBe(firstCommit);
    expect(result.packet.changed_files).toEqual([
      { path: "src/invoice.ts", change: "modified", additions: 1, deletions: 1 },
      { path: "src/legacy.ts", change: "deleted", additions: 0, deletions: 1 },
      { path: "src/tax.ts", change: "added", additions: 1, deletions: 0 },
    ]);
  });
});

describe("idempotency", () => {
  for (const scenario of SCENARIOS) {
    it(`${scenario.name}: a second run writes the same bytes and rewrites nothing`, async () => {
      const bench = track(await scenario.build());
      const options = { k: scenario.k ?? 5, allowDirty: scenario.allowDirty ?? false };
      const first = await generate(bench.root, options);
      const before = await snapshotOutputs(bench.root);
      const second = await generate(bench.root, options);
      expect(await snapshotOutputs(bench.root)).toEqual(before);
      expect(second.packet).toEqual(first.packet);
      expect(second.files.map((file) => file.written)).toEqual([false, false]);
    });
  }

  it("superseding: the rerun neither re-supersedes nor reads its own packet as the previous one", async () => {
    const { bench } = await buildSupersedingScenario();
    track(bench);
    const first = await generate(bench.root);
    const before = await snapshotOutputs(bench.root);
    const second = await generate(bench.root);
    expect(await snapshotOutputs(bench.root)).toEqual(before);
    expect(second.packet).toEqual(first.packet);
    expect(second.superseded).toEqual([]);
  });
});

describe("a dirty workbench", () => {
  const dirty = SCENARIOS.find((scenario) => scenario.name === "dirty-allowed")!;

  it("is refused without --allow-dirty: problems written to clean_state.json, no packet", async () => {
    const bench = track(await dirty.build());
    const result = await generateHandoff({ root: bench.root, k: 5, allowDirty: false });
    expect(result.refused).toBe(true);
    const checks = result.problems.map((problem) => problem.check);
    expect(new Set(checks)).toEqual(new Set(["working_tree", "git_head", "temp_files", "last_test_run", "feature_list"]));
    expect(JSON.parse(await read(result.cleanStatePath))).toEqual({ clean: false, blocking: result.problems });
    await expect(stat(path.join(bench.root, "outputs/handoff"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("is handed off with --allow-dirty: every problem in clean_state and as a high risk", async () => {
    const bench = track(await dirty.build());
    const result = await generate(bench.root, { allowDirty: true });
    expect(result.packet.clean_state).toEqual(result.problems);
    const risks = result.packet.open_risks as { id: string; severity: string; detail: string }[];
    const dirtyRisks = risks.filter((risk) => risk.id.startsWith("clean-state-"));
    expect(dirtyRisks).toHaveLength(result.problems.length);
    expect(new Set(dirtyRisks.map((risk) => risk.severity))).toEqual(new Set(["high"]));
    expect(result.packet.summary).toContain(`Handed off with ${result.problems.length} clean-state problems (--allow-dirty).`);
  });
});

describe("what goes into the packet", () => {
  it("takes last_known_good_commit from a passed verification's head_commit, else HEAD of a clean tree", async () => {
    const [clean, low] = [SCENARIOS[0]!, SCENARIOS.find((scenario) => scenario.name === "low-review-total")!];
    const cleanBench = track(await clean.build());
    const head = cleanBench.git("rev-parse", "HEAD").trim();
    expect((await generate(cleanBench.root)).packet).toMatchObject({ last_known_good_commit: head, head_commit: head, branch: "main" });
    const lowBench = track(await low.build());
    const packet = (await generate(lowBench.root)).packet;
    expect(packet.last_known_good_commit).toBe("4e1c9a2");
    expect(packet).not.toHaveProperty("branch");
  });

  it("never invents a next action: without one the packet carries the contract's sentinel", async () => {
    const bench = track(await makeTestWorkbench());
    await bench.write("agent_state.json", agentState("T-1", { next_action: "   " }));
    await bench.write("feedback_record.jsonl", jsonl([passingTests()]));
    expect((await generate(bench.root)).packet.next_action).toBe(NEXT_ACTION_SENTINEL);
  });

  it("passes the state's agent on as written, unless --agent names one", async () => {
    const bench = track(await makeTestWorkbench());
    const agent = { name: "builder-7", kind: "claude-code", model: "opus" };
    await bench.write("agent_state.json", agentState("T-1", { agent }));
    await bench.write("feedback_record.jsonl", jsonl([passingTests()]));
    expect((await generate(bench.root)).packet.agent).toEqual(agent);
    expect((await generate(bench.root, { agent: "runner-2" })).packet.agent).toBe("runner-2");
  });

  it("passes the state's usage and pull request on when the contract accepts them, and notes them when not", async () => {
    const bench = track(await makeTestWorkbench());
    const usage = { input_tokens: 1200, output_tokens: 300, cost_usd: 0.42, model: "m-1", duration_ms: 65_000 };
    const pullRequest = { url: "https://github.com/acme/app/pull/12", state: "open", head_branch: "feat/x" };
    await bench.write("agent_state.json", agentState("T-1", { usage, pull_request: pullRequest }));
    await bench.write("feedback_record.jsonl", jsonl([passingTests()]));
    const { packet } = await generate(bench.root);
    expect(packet).toMatchObject({ usage, pull_request: pullRequest });
    expect(() => validatePacket(packet)).not.toThrow();

    await bench.write("agent_state.json", agentState("T-1", { usage: { input_tokens: -5 } }));
    const refused = (await generate(bench.root)).packet;
    expect(refused.usage).toBeUndefined();
    expect(refused.workbench_notes).toEqual(expect.arrayContaining([expect.stringContaining("usage: agent_state.json's usage is not in the contract's shape")]));
  });

  it("uses --session-id and --created-at when given, and refuses a session id that is not one folder name", async () => {
    const bench = track(await makeTestWorkbench());
    await bench.write("agent_state.json", agentState("T-1"));
    await bench.write("feedback_record.jsonl", jsonl([passingTests()]));
    const result = await generate(bench.root, { sessionId: "run-42", createdAt: "2026-11-21T10:00:00Z" });
    expect(result.packet).toMatchObject({ session_id: "run-42", created_at: "2026-11-21T10:00:00.000Z" });
    expect(result.files[0]!.path).toBe(path.join(bench.root, "outputs/handoff/run-42/handoff.json"));
    const error = await generate(bench.root, { sessionId: "../escape" }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BatonError);
    expect((error as BatonError).message).toContain('--session-id "../escape" cannot name a folder');
  });

  it("derives created_at from the newest input: a later feedback record's end beats the file times", async () => {
    const bench = track(await makeTestWorkbench());
    await bench.write("agent_state.json", agentState("T-1"));
    await bench.write("feedback_record.jsonl", jsonl([{ ...passingTests("2026-11-20T09:30:00Z"), duration_ms: 60_000 }]));
    expect((await generate(bench.root)).packet.created_at).toBe("2026-11-20T09:31:00.000Z");
  });
});

describe("errors", () => {
  it("names the file, and the line and column, of malformed JSON", async () => {
    const bench = track(await makeTestWorkbench());
    await bench.write("agent_state.json", '{\n  "active_task_id": "T-1",\n  "blockers": ["a" "b"]\n}\n');
    const error = await generateHandoff({ root: bench.root, k: 5, allowDirty: true }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BatonError);
    expect((error as BatonError).code).toBe("invalid_json");
    expect((error as BatonError).message).toMatch(/^agent_state\.json is not valid JSON: Expected ',' or '\]' after array element in JSON at position 48 \(line 3, column 20\)\. Fix the file/);
  });

  it("names the file and the field of a report in the wrong shape", async () => {
    const bench = track(await makeTestWorkbench());
    await bench.write("agent_state.json", agentState("T-1"));
    await bench.write("outputs/review/T-1.json", { task_id: "T-1", total: 11, verdict: "pass", dimensions: [] });
    const error = (await generateHandoff({ root: bench.root, k: 5, allowDirty: true }).catch((caught: unknown) => caught)) as BatonError;
    expect(error.code).toBe("invalid_fields");
    expect(error.message).toMatch(/^outputs\/review\/T-1\.json: not a valid review report: total: /);
  });

  it("names the field of agent_state.json in the wrong shape", async () => {
    const bench = track(await makeTestWorkbench());
    await bench.write("agent_state.json", agentState("T-1", { blockers: ["fine", 42] }));
    const error = (await generateHandoff({ root: bench.root, k: 5, allowDirty: true }).catch((caught: unknown) => caught)) as BatonError;
    expect(error.message).toMatch(/^agent_state\.json: blockers\[1\]: Invalid input: expected string, received number/);
  });

  it("reports malformed feedback lines by number and uses the other lines", async () => {
    const bench = track(await SCENARIOS.find((scenario) => scenario.name === "argv-and-null-exits")!.build());
    const result = await generate(bench.root, { k: 2 });
    const log = result.packet.feedback_log as { records: number; malformed_lines: { line: number; problem: string }[] };
    expect(log.records).toBe(7);
    expect(log.malformed_lines.map((item) => item.line)).toEqual([3, 9]);
    expect(log.malformed_lines[1]!.problem).toMatch(/^command: /);
    expect(result.notes).toContain(`feedback_record.jsonl line 9 skipped: ${log.malformed_lines[1]!.problem}`);
    // Last 2 records plus every failing one (null exit, absent exit, exit 2), in log order.
    expect((result.packet.feedback_tail as { line: number }[]).map((record) => record.line)).toEqual([2, 4, 5, 7, 8]);
  });

  it("notes missing optional files in the packet", async () => {
    const bench = track(await SCENARIOS.find((scenario) => scenario.name === "missing-state")!.build());
    const result = await generate(bench.root);
    expect(result.notes.slice(0, 2)).toEqual(["agent_state.json not found", "outputs/review/T-031.json not found"]);
    expect(result.packet.summary).toContain("Not found: agent_state.json, outputs/review/T-031.json.");
  });

  it("leaves an absent feature_list.json out of the summary (it stays in the notes) and writes last_known_good_commit: null", async () => {
    const bench = track(await SCENARIOS.find((scenario) => scenario.name === "missing-state")!.build());
    await rm(path.join(bench.root, "feature_list.json"), { force: true });
    const result = await generate(bench.root, { taskId: "T-031" });
    expect(result.notes).toContain("feature_list.json not found");
    expect(result.packet.summary).not.toContain("feature_list.json");
    expect(result.packet).toHaveProperty("last_known_good_commit", null);
  });
});
