import fs from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { checkRef, isInside, MISSING, REFUSAL, resolveInsideRoot } from "./safe-path";
import { tempWorkspaceForEachTest } from "@/testing/temp-workspace";

const LEXICAL_REFUSALS: [string, string][] = [
  ["", REFUSAL.empty],
  ["   ", REFUSAL.empty],
  ["a".repeat(1025), REFUSAL.tooLong],
  ["outputs/a\0.json", REFUSAL.nul],
  ["outputs/a\n.json", REFUSAL.control],
  ["outputs/\u007f.json", REFUSAL.control],
  ["outputs/\u202egnp.json", REFUSAL.control],
  ["/etc/passwd", REFUSAL.absolute],
  ["//server/share/x.json", REFUSAL.absolute],
  ["C:\\reports\\x.json", REFUSAL.absolute],
  ["c:/reports/x.json", REFUSAL.absolute],
  ["C:x.json", REFUSAL.absolute],
  ["\\\\server\\share\\x.json", REFUSAL.absolute],
  ["\\x.json", REFUSAL.absolute],
  ["outputs\\..\\..\\x.json", REFUSAL.backslash],
  ["%2e%2e/%2e%2e/etc/passwd", REFUSAL.percent],
  ["outputs%2f..%2fx.json", REFUSAL.percent],
  ["%2E%2E/x.json", REFUSAL.percent],
  ["outputs/%41.json", REFUSAL.percent],
  ["outputs/%252e%252e/x.json", REFUSAL.percent],
  ["../../etc/passwd", REFUSAL.dotDot],
  ["outputs/../../x.json", REFUSAL.dotDot],
  ["outputs/..", REFUSAL.dotDot],
  ["..", REFUSAL.dotDot],
];

describe("checkRef", () => {
  it.each(LEXICAL_REFUSALS)("refuses %j: %s", (ref, reason) => {
    expect(checkRef(ref)).toEqual({ ok: false, reason });
  });

  it.each([
    ["outputs/verification/T-014.json"],
    ["./outputs/review/T-014.json"],
    ["outputs//review/T-014.json"],
    ["outputs/..hidden/x.json"],
    ["outputs/x...json"],
    ["outputs/100%.json"],
    ["reports/résumé.json"],
  ])("lets %j through to the file system checks", (ref) => {
    expect(checkRef(ref)).toEqual({ ok: true });
  });
});

describe("isInside", () => {
  it.each([
    ["/a/b", "/a/b", true],
    ["/a/b", "/a/b/c.json", true],
    ["/a/b", "/a/b/..c/d.json", true],
    ["/a/b", "/a/bc/d.json", false],
    ["/a/b", "/a", false],
    ["/a/b", "/etc/passwd", false],
  ])("%s holds %s: %s", (parent, child, inside) => {
    expect(isInside(parent, child)).toBe(inside);
  });
});

describe("resolveInsideRoot", () => {
  const ws = tempWorkspaceForEachTest();
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it.each(LEXICAL_REFUSALS)("refuses %j without touching the disk", async (ref, reason) => {
    const realpath = vi.spyOn(fs, "realpath");
    const lstat = vi.spyOn(fs, "lstat");
    expect(await resolveInsideRoot(ws.root, ref)).toEqual({ ok: false, code: "refused", reason });
    expect(realpath).not.toHaveBeenCalled();
    expect(lstat).not.toHaveBeenCalled();
  });

  it("resolves a file inside the root to its real path", async () => {
    const file = await ws.write("ws/outputs/verification/T-1.json", "{}");
    expect(await resolveInsideRoot(ws.root, "outputs/verification/T-1.json")).toEqual({
      ok: true,
      path: await fs.realpath(file),
      root: await fs.realpath(ws.root),
    });
  });

  it("says missing for a file that is not there", async () => {
    await ws.write("ws/outputs/review/other.json", "{}");
    expect(await resolveInsideRoot(ws.root, "outputs/review/T-1.json")).toEqual({ ok: false, code: "missing", reason: MISSING.file });
    expect(await resolveInsideRoot(ws.root, "nowhere/at/all.json")).toEqual({ ok: false, code: "missing", reason: MISSING.file });
  });

  it("says missing when a path component is a file", async () => {
    await ws.write("ws/outputs/x.json", "{}");
    expect(await resolveInsideRoot(ws.root, "outputs/x.json/y.json")).toEqual({ ok: false, code: "missing", reason: MISSING.file });
  });

  it("says the root is missing when it does not exist", async () => {
    expect(await resolveInsideRoot(path.join(ws.base, "gone"), "x.json")).toEqual({ ok: false, code: "missing", reason: MISSING.root });
  });

  it("refuses a symlink to a file outside the root", async () => {
    const outside = await ws.write("canary.json", "{}");
    await ws.symlink(outside, "ws/outputs/verification/T-1.json");
    expect(await resolveInsideRoot(ws.root, "outputs/verification/T-1.json")).toEqual({
      ok: false,
      code: "refused",
      reason: REFUSAL.symlinkOutside,
    });
  });

  it("refuses a relative symlink that climbs out of the root", async () => {
    await ws.write("canary.json", "{}");
    await ws.symlink("../../canary.json", "ws/outputs/T-1.json");
    expect(await resolveInsideRoot(ws.root, "outputs/T-1.json")).toMatchObject({ ok: false, reason: REFUSAL.symlinkOutside });
  });

  it("refuses files under a symlinked folder that points outside, present or not", async () => {
    await ws.write("outside/verification/T-1.json", "{}");
    await ws.symlink(path.join(ws.base, "outside"), "ws/outputs");
    expect(await resolveInsideRoot(ws.root, "outputs/verification/T-1.json")).toMatchObject({ ok: false, code: "refused", reason: REFUSAL.symlinkOutside });
    // "missing" here would tell a caller which files exist outside the root.
    expect(await resolveInsideRoot(ws.root, "outputs/verification/T-2.json")).toMatchObject({ ok: false, code: "refused", reason: REFUSAL.symlinkOutside });
  });

  it("allows a symlink that stays inside the root", async () => {
    const real = await ws.write("ws/reports/T-1.json", "{}");
    await ws.symlink(path.join(ws.root, "reports"), "ws/outputs");
    expect(await resolveInsideRoot(ws.root, "outputs/T-1.json")).toMatchObject({ ok: true, path: await fs.realpath(real) });
  });

  it("allows a root that is itself reached through a symlink", async () => {
    const real = await ws.write("ws/outputs/T-1.json", "{}");
    const linkedRoot = await ws.symlink(ws.root, "linked-ws");
    expect(await resolveInsideRoot(linkedRoot, "outputs/T-1.json")).toMatchObject({ ok: true, path: await fs.realpath(real) });
  });

  it("refuses a broken symlink and a symlink loop", async () => {
    await ws.symlink(path.join(ws.base, "nothing.json"), "ws/broken.json");
    await ws.symlink(path.join(ws.root, "loop-b.json"), "ws/loop-a.json");
    await ws.symlink(path.join(ws.root, "loop-a.json"), "ws/loop-b.json");
    expect(await resolveInsideRoot(ws.root, "broken.json")).toMatchObject({ ok: false, code: "refused", reason: REFUSAL.symlinkBroken });
    expect(await resolveInsideRoot(ws.root, "loop-a.json")).toMatchObject({ ok: false, code: "refused", reason: REFUSAL.symlinkLoop });
  });
});
