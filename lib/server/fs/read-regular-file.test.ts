import { mkdtemp, open, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readAtMost, readRegularFile } from "./read-regular-file";

let dir = "";
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "baton-read-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const text = (length: number) => Array.from({ length }, (_, index) => String.fromCharCode(97 + (index % 26))).join("");

describe("readAtMost", () => {
  it("reads a file that grew past the size it was expected to have, whole, up to the limit", async () => {
    const file = path.join(dir, "grown.json");
    await writeFile(file, text(10_000));
    const handle = await open(file, "r");
    try {
      // Expected 3 bytes (a stale stat): the buffer grows as the file keeps filling it.
      expect((await readAtMost(handle, 20_000, 3)).toString()).toBe(text(10_000));
      // Never more than the limit, however much there is.
      expect((await readAtMost(handle, 4_097, 3)).toString()).toBe(text(4_097));
      // Expected right, and with no size given at all (the limit's buffer).
      expect((await readAtMost(handle, 20_000, 10_000)).toString()).toBe(text(10_000));
      expect((await readAtMost(handle, 20_000)).toString()).toBe(text(10_000));
    } finally {
      await handle.close();
    }
  });

  it("reads an empty file as no bytes", async () => {
    const file = path.join(dir, "empty.json");
    await writeFile(file, "");
    const handle = await open(file, "r");
    try {
      expect(await readAtMost(handle, 100, 0)).toHaveLength(0);
    } finally {
      await handle.close();
    }
  });
});

describe("readRegularFile", () => {
  it("reads a small file under a large limit, and calls one past the limit too large", async () => {
    const file = path.join(dir, "handoff.json");
    await writeFile(file, '{"summary":"small"}');
    expect(await readRegularFile(file, { maxBytes: 8 * 1024 * 1024 })).toEqual({ kind: "ok", bytes: Buffer.from('{"summary":"small"}') });
    expect(await readRegularFile(file, { maxBytes: 18 })).toEqual({ kind: "too_large", size: 19 });
  });
});
