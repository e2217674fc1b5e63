import { afterEach, describe, expect, it } from "vitest";
import { projectFromRemote, readGitState } from "./git";
import { makeTestWorkbench, type TestWorkbench } from "@/testing/generator/workbench";

const benches: TestWorkbench[] = [];
afterEach(async () => {
  await Promise.all(benches.splice(0).map((bench) => bench.remove()));
});

describe("projectFromRemote", () => {
  it.each([
    ["git@github.com:acme/billing.git", "acme/billing"],
    ["https://github.com/acme/billing", "acme/billing"],
    ["https://gitlab.example.com/group/sub/repo.git/", "group/sub/repo"],
    ["/srv/git/billing.git", null],
    ["file:///srv/git/billing.git", null],
    ["ssh://git@host:2222/acme/billing.git", "acme/billing"],
    ["billing", null],
  ])("%s -> %s", (url, expected) => {
    expect(projectFromRemote(url)).toBe(expected);
  });
});

describe("readGitState", () => {
  it("says plainly when the root is not a repository", async () => {
    const bench = await makeTestWorkbench();
    benches.push(bench);
    expect(await readGitState(bench.root)).toMatchObject({ repo: false, reason: "not a git repository", head: null, branch: null });
  });

  it("reads a branch with no commits yet: a branch, no HEAD commit", async () => {
    const bench = await makeTestWorkbench({ git: true });
    benches.push(bench);
    await bench.write("a.txt", "a\n");
    expect(await readGitState(bench.root)).toMatchObject({ repo: true, prefix: "", head: null, branch: "main", status: [{ code: "??", path: "a.txt" }] });
  });

  it("reads HEAD, its commit time, the origin remote and the root's place in the repository", async () => {
    const bench = await makeTestWorkbench({ git: true });
    benches.push(bench);
    await bench.write("sub/dir/a.txt", "a\n");
    const head = bench.commit("one");
    bench.git("remote", "add", "origin", "git@github.com:acme/billing.git");
    const state = await readGitState(`${bench.root}/sub/dir`);
    expect(state).toMatchObject({ repo: true, prefix: "sub/dir/", head, headTimeMs: Date.parse("2026-11-20T08:00:00Z"), branch: "main", topName: "workbench", originUrl: "git@github.com:acme/billing.git", status: [] });
  });
});
