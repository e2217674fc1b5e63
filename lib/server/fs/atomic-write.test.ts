import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeFileAtomic } from "./atomic-write";

let dir = "";
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "baton-atomic-"));
});
afterEach(async () => {
  await chmod(dir, 0o755).catch(() => {});
  await rm(dir, { recursive: true, force: true });
});

const tempFiles = async (folder: string) => (await readdir(folder)).filter((name) => name.endsWith(".tmp"));
// root ignores folder permissions, so a read-only folder cannot make a write fail
const isRoot = process.getuid?.() === 0;

describe("writeFileAtomic", () => {
  it("writes a new file with mode 0644 and leaves no temp file", async () => {
    const file = path.join(dir, "handoff.json");
    await writeFileAtomic(file, '{"a":1}');
    expect(await readFile(file, "utf8")).toBe('{"a":1}');
    expect((await stat(file)).mode & 0o777).toBe(0o644);
    expect(await readdir(dir)).toEqual(["handoff.json"]);
  });

  it("replaces an existing file, keeping its mode, and accepts bytes", async () => {
    const file = path.join(dir, "handoff.json");
    await writeFile(file, "old, and longer than the new content");
    await chmod(file, 0o600);
    await writeFileAtomic(file, new TextEncoder().encode("new"));
    expect(await readFile(file, "utf8")).toBe("new");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await tempFiles(dir)).toEqual([]);
  });

  it("throws and removes the temp file when the target is a folder", async () => {
    const target = path.join(dir, "handoff.json");
    await mkdir(target);
    await expect(writeFileAtomic(target, "{}")).rejects.toThrow();
    expect(await tempFiles(dir)).toEqual([]);
    expect((await stat(target)).isDirectory()).toBe(true);
  });

  it("throws when the folder does not exist", async () => {
    await expect(writeFileAtomic(path.join(dir, "nope", "handoff.json"), "{}")).rejects.toMatchObject({ code: "ENOENT" });
  });

  it.skipIf(isRoot)("throws and leaves the file alone when the folder is read-only", async () => {
    const file = path.join(dir, "handoff.json");
    await writeFile(file, "old");
    await chmod(dir, 0o555);
    await expect(writeFileAtomic(file, "new")).rejects.toMatchObject({ code: "EACCES" });
    expect(await readFile(file, "utf8")).toBe("old");
    expect(await tempFiles(dir)).toEqual([]);
  });

  it("concurrent writes end with one complete content, and a reader never sees a partial file", async () => {
    const file = path.join(dir, "handoff.json");
    const contentOf = (i: number) => JSON.stringify({ writer: i, padding: "x".repeat(10_000 + i * 100) });
    await writeFileAtomic(file, contentOf(-1));

    let writing = true;
    const badReads: string[] = [];
    const reader = (async () => {
      while (writing) {
        const text = await readFile(file, "utf8");
        try {
          JSON.parse(text);
        } catch {
          badReads.push(text.slice(0, 40));
        }
      }
    })();
    const writers = Array.from({ length: 50 }, (_, i) => writeFileAtomic(file, contentOf(i)));
    await Promise.all(writers);
    writing = false;
    await reader;

    expect(badReads).toEqual([]);
    const final = JSON.parse(await readFile(file, "utf8")) as { writer: number };
    expect(await readFile(file, "utf8")).toBe(contentOf(final.writer));
    expect(final.writer).toBeGreaterThanOrEqual(0);
    expect(await tempFiles(dir)).toEqual([]);
  });
});
