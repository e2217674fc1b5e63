import { mkdtemp, mkdir, rm, writeFile, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findChangedHandoffs } from "./rescan";

let root = "";
afterEach(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe("findChangedHandoffs", () => {
  it("finds new and changed handoff.json files only, skipping other files, dot folders and node_modules", async () => {
    root = await mkdtemp(path.join(tmpdir(), "baton-rescan-"));
    const file = path.join(root, "ws", "outputs", "handoff", "s1", "handoff.json");
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, "{}");
    await mkdir(path.join(root, ".git", "x"), { recursive: true });
    await writeFile(path.join(root, ".git", "x", "handoff.json"), "{}");
    await mkdir(path.join(root, "node_modules", "y"), { recursive: true });
    await writeFile(path.join(root, "node_modules", "y", "handoff.json"), "{}");
    await writeFile(path.join(root, "ws", "other.json"), "{}");

    const seen = new Map<string, string>();
    expect(await findChangedHandoffs([root], seen)).toEqual([file]);
    expect(await findChangedHandoffs([root], seen)).toEqual([]);

    await writeFile(file, '{"summary": "changed"}');
    await utimes(file, new Date(), new Date(Date.now() + 5_000));
    expect(await findChangedHandoffs([root], seen)).toEqual([file]);
    expect(await findChangedHandoffs([root, path.join(root, "missing")], seen)).toEqual([]);
  });
});
