import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { resetConfig } from "../../server/config";
import { BatonError } from "../../core/errors";
import { parseWorkspaceRoots, workspaceRootsFor } from "./roots";

describe("workspaceRootsFor", () => {
  const entries = ["billing=/srv/billing", " web = /srv/web-app "];

  it("gives the recorded workspace root of a watched-folder packet", () => {
    expect(workspaceRootsFor({ workspaceRoot: "/data/agents/ws", project: null }, entries)).toEqual(["/data/agents/ws"]);
  });

  it("gives the configured root of the packet's project, trimmed", () => {
    expect(workspaceRootsFor({ workspaceRoot: null, project: "web" }, entries)).toEqual(["/srv/web-app"]);
  });

  it("gives both, the recorded root first, and each only once", () => {
    expect(workspaceRootsFor({ workspaceRoot: "/data/ws", project: "billing" }, entries)).toEqual(["/data/ws", "/srv/billing"]);
    expect(workspaceRootsFor({ workspaceRoot: "/srv/billing/", project: "billing" }, entries)).toEqual(["/srv/billing"]);
  });

  it("gives nothing for an unconfigured project and no recorded root", () => {
    expect(workspaceRootsFor({ workspaceRoot: null, project: "other" }, entries)).toEqual([]);
    expect(workspaceRootsFor({ workspaceRoot: null, project: null }, entries)).toEqual([]);
  });

  it("resolves a relative configured path to an absolute one", () => {
    expect(workspaceRootsFor({ workspaceRoot: null, project: "p" }, ["p=roots/p"])).toEqual([path.resolve("roots/p")]);
  });

  describe("reading BATON_WORKSPACE_ROOTS from the environment", () => {
    const saved = process.env.BATON_WORKSPACE_ROOTS;
    afterEach(() => {
      if (saved === undefined) delete process.env.BATON_WORKSPACE_ROOTS;
      else process.env.BATON_WORKSPACE_ROOTS = saved;
      resetConfig();
    });

    it("uses config() when no entries are passed", () => {
      process.env.BATON_WORKSPACE_ROOTS = "billing=/srv/billing, web=/srv/web";
      resetConfig();
      expect(workspaceRootsFor({ workspaceRoot: null, project: "web" })).toEqual(["/srv/web"]);
    });

    it("reports a bad entry in the environment", () => {
      process.env.BATON_WORKSPACE_ROOTS = "billing:/srv/billing";
      resetConfig();
      expect(() => workspaceRootsFor({ workspaceRoot: null, project: "billing" })).toThrow(/BATON_WORKSPACE_ROOTS/);
    });
  });
});

describe("parseWorkspaceRoots", () => {
  it.each([
    [["billing"], /entry 1 \("billing"\) has no "="/],
    [["ok=/a", "=/srv/x"], /entry 2 \("=\/srv\/x"\) has no project/],
    [["billing=  "], /has no path after "="/],
    [["a=/x", "a=/y"], /names project "a" a second time/],
  ])("refuses %j with a message naming the variable and the expected shape", (entries, problem) => {
    let thrown: unknown;
    try {
      parseWorkspaceRoots(entries);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(BatonError);
    const message = (thrown as BatonError).message;
    expect(message).toMatch(problem);
    expect(message).toContain("BATON_WORKSPACE_ROOTS must be");
    expect(message).toContain("project=/abs/path");
  });

  it("checks every entry, not only the one a thread needs", () => {
    expect(() => workspaceRootsFor({ workspaceRoot: "/ws", project: null }, ["broken"])).toThrow(BatonError);
  });

  it("keeps the first '=' as the separator so paths may contain '='", () => {
    expect(parseWorkspaceRoots(["p=/srv/a=b"]).get("p")).toBe("/srv/a=b");
  });
});
