import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkWorkbench, PROBLEMS_PER_CHECK } from "./check";
import { agentState, featureList, jsonl, makeTestWorkbench, passingTests, type TestWorkbench } from "@/testing/generator/workbench";

const benches: TestWorkbench[] = [];
afterEach(async () => {
  await Promise.all(benches.splice(0).map((bench) => bench.remove()));
});

/** An empty workbench, removed after the test. */
async function newBench(options: { git?: boolean } = {}): Promise<TestWorkbench> {
  const bench = await makeTestWorkbench(options);
  benches.push(bench);
  return bench;
}

/** A clean git workbench: code committed, artifacts untracked, the last test run passed. */
async function cleanBench(): Promise<TestWorkbench> {
  const bench = await newBench({ git: true });
  await bench.write("src/a.ts", "export const a = 1;\n");
  await bench.write("feature_list.json", featureList("T-1"));
  bench.commit("start");
  await bench.write("agent_state.json", agentState("T-1"));
  await bench.write("feedback_record.jsonl", jsonl([passingTests()]));
  await bench.write("outputs/verification/T-1.json", { task_id: "T-1", passed: true, findings: [] });
  return bench;
}

const problemsOf = async (root: string, options = {}) => (await checkWorkbench(root, options)).problems;

describe("checkWorkbench", () => {
  it("finds nothing on a clean workbench and writes an empty clean_state.json", async () => {
    const bench = await cleanBench();
    const result = await checkWorkbench(bench.root);
    expect(result.problems).toEqual([]);
    expect(result.cleanStatePath).toBe(path.join(bench.root, "outputs/clean_state.json"));
    expect(await readFile(result.cleanStatePath, "utf8")).toBe('{\n  "clean": true,\n  "blocking": []\n}\n');
  });

  it("reports uncommitted changes, but not the workbench's own session artifacts", async () => {
    const bench = await cleanBench();
    await bench.write("src/a.ts", "export const a = 22;\n");
    bench.git("add", "src/a.ts");
    await bench.write("src/a.ts", "export const a = 333;\n");
    await bench.write("src/new.ts", "export {};\n");
    await bench.write("feature_list.json", featureList("T-1", [{ id: "T-1", status: "in progress" }]));
    await bench.write("outputs/review/T-1.json", { total: 9, verdict: "pass" });
    expect(await problemsOf(bench.root)).toEqual([
      { check: "working_tree", detail: "feature_list.json modified and not committed" },
      { check: "working_tree", detail: "src/a.ts modified and not committed" },
      { check: "working_tree", detail: "src/new.ts is not tracked and not committed" },
    ]);
  });

  it("does not count paths listed in .batonignore (an init script's report, a log folder, a pattern)", async () => {
    const bench = await cleanBench();
    await bench.write("init_report.json", { ok: true });
    await bench.write("logs/run-1.log", "x");
    await bench.write("cache/a.tmp", "x");
    await bench.write("src/still-counted.ts", "export {};\n");
    await bench.write(".batonignore", "# left by the capstone's init script\ninit_report.json\nlogs/\n**/*.tmp\n.batonignore\n");
    expect(await problemsOf(bench.root)).toEqual([{ check: "working_tree", detail: "src/still-counted.ts is not tracked and not committed" }]);
  });

  it("lists at most 20 problems per check and counts the rest", async () => {
    const bench = await cleanBench();
    for (let index = 0; index < PROBLEMS_PER_CHECK + 5; index++) await bench.write(`gen/f${String(index).padStart(2, "0")}.ts`, "");
    const problems = await problemsOf(bench.root);
    expect(problems).toHaveLength(PROBLEMS_PER_CHECK + 1);
    expect(problems.at(-1)).toEqual({ check: "working_tree", detail: "and 5 more like these" });
  });

  it("reports a detached HEAD and a branch other than the expected one", async () => {
    const bench = await cleanBench();
    expect(await problemsOf(bench.root, { expectedBranch: "feat/x" })).toEqual([{ check: "git_head", detail: "on branch main, expected feat/x" }]);
    await bench.write("agent_state.json", agentState("T-1", { branch: "feat/y" }));
    expect(await problemsOf(bench.root)).toEqual([{ check: "git_head", detail: "on branch main, expected feat/y" }]);
    // --branch wins over the state's branch.
    expect(await problemsOf(bench.root, { expectedBranch: "main" })).toEqual([]);
    const head = bench.git("rev-parse", "HEAD").trim();
    bench.git("checkout", "-q", "--detach");
    expect(await problemsOf(bench.root, { expectedBranch: "main" })).toEqual([
      { check: "git_head", detail: `HEAD is detached at ${head.slice(0, 12)}; commit the work to a branch` },
    ]);
  });

  it("reports *.tmp files and scratch folders anywhere under the root, but not in .git or node_modules", async () => {
    const bench = await newBench();
    await bench.write("feedback_record.jsonl", jsonl([passingTests()]));
    await mkdir(path.join(bench.root, "outputs"), { recursive: true });
    // Each file left behind, in path order, and what the check says of it (null: nothing).
    const leftovers: [string, string | null][] = [
      [".scratch/notes.md", "scratch folder .scratch/ left behind"],
      ["deep/er/plan.TMP", "temporary file deep/er/plan.TMP left behind"],
      ["node_modules/pkg/cache.tmp", null],
      ["scratch-2/x", "scratch folder scratch-2/ left behind"],
      ["src/scratchpad.ts", null],
    ];
    for (const [file] of leftovers) await bench.write(file, "");
    expect(await problemsOf(bench.root)).toEqual(leftovers.flatMap(([, detail]) => (detail ? [{ check: "temp_files", detail }] : [])));
  });

  it("reports a failing, unknown or missing last test run, judged by the last test command only", async () => {
    const bench = await newBench();
    const detailFor = async (records: object[] | null) => {
      if (records) await bench.write("feedback_record.jsonl", jsonl(records));
      return (await problemsOf(bench.root)).map((problem) => `${problem.check}: ${problem.detail}`);
    };
    expect(await detailFor(null)).toEqual(["last_test_run: unknown: feedback_record.jsonl not found, so no test run is recorded"]);
    expect(await detailFor([{ command: "npm run build", exit_code: 0 }])).toEqual(["last_test_run: unknown: no test command in feedback_record.jsonl"]);
    expect(await detailFor([passingTests(), { command: ["pytest", "-x"], exit_code: 1 }, { command: "ls", exit_code: 0 }])).toEqual([
      "last_test_run: failing: last test run `pytest -x` (feedback_record.jsonl line 2) exited 1",
    ]);
    expect(await detailFor([{ command: "go test ./...", exit_code: null }])).toEqual([
      "last_test_run: unknown: last test run `go test ./...` (feedback_record.jsonl line 1) has no exit code",
    ]);
    expect(await detailFor([{ command: "npm test", exit_code: 1 }, { command: "npm test", exit_code: 0 }, { command: "npm run lint", exit_code: 1 }])).toEqual([]);
  });

  it("reports a feature list that contradicts itself", async () => {
    const bench = await newBench();
    await bench.write("feedback_record.jsonl", jsonl([passingTests()]));
    const detailsFor = async (list: object) => {
      await bench.write("feature_list.json", list);
      return (await problemsOf(bench.root)).map((problem) => problem.detail);
    };
    expect(await detailsFor(featureList("F-1", [{ id: "F-1", status: "in_progress" }, { id: "F-2", status: "todo" }]))).toEqual([]);
    expect(await detailsFor(featureList("F-1", [{ id: "F-1", status: "In Progress" }, { id: "F-2", status: "in-progress" }]))).toEqual([
      "2 features are in progress at once (F-1, F-2); finish or park all but one",
    ]);
    expect(await detailsFor(featureList("F-9", [{ id: "F-1", status: "todo" }]))).toEqual(["active names F-9, which is not in features"]);
    expect(await detailsFor(featureList("F-1", [{ id: "F-1", status: "done" }]))).toEqual(["active names F-1, which is already done"]);
    expect(await detailsFor({ ...featureList("F-1"), active: null })).toEqual([]);
  });

  it("checks the whole repository when the root is a folder inside it", async () => {
    const bench = await newBench({ git: true });
    await bench.write("README.md", "top\n");
    bench.commit("top");
    const root = path.join(bench.root, "agents/seven");
    await bench.write("agents/seven/feedback_record.jsonl", jsonl([passingTests()]));
    await bench.write("agents/seven/agent_state.json", agentState("T-1"));
    await bench.write("agents/seven/outputs/review/T-1.json", { total: 9, verdict: "pass" });
    await bench.write("README.md", "top, edited\n");
    expect(await problemsOf(root)).toEqual([{ check: "working_tree", detail: "README.md modified and not committed" }]);
  });
});
