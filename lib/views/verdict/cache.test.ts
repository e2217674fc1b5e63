import fs from "node:fs/promises";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { clearVerdictCache, fitVerdictCacheToBoard, readVerdictCached, verdictCacheLimit, verdictCacheSize } from "./cache";
import type { VerdictPointer } from "./read";
import { makeTempWorkspace, type TempWorkspace } from "@/testing/temp-workspace";

const POINTERS: VerdictPointer[] = [{ kind: "verification", ref: "outputs/verification/T-1.json" }];
const FILE = "ws/outputs/verification/T-1.json";

describe("readVerdictCached", () => {
  let ws: TempWorkspace;
  beforeEach(async () => {
    clearVerdictCache();
    ws = await makeTempWorkspace();
    await ws.write(FILE, JSON.stringify({ passed: true }));
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    clearVerdictCache();
    await ws.remove();
  });

  it("serves the cached reading until the thread page asks for a fresh one", async () => {
    const first = await readVerdictCached("v1", POINTERS, [ws.root]);
    expect(first.summary.state).toBe("pass");

    await ws.write(FILE, JSON.stringify({ passed: false }));
    const open = vi.spyOn(fs, "open");
    const cached = await readVerdictCached("v1", POINTERS, [ws.root]);
    expect(cached).toBe(first);
    expect(open).not.toHaveBeenCalled();

    const fresh = await readVerdictCached("v1", POINTERS, [ws.root], { fresh: true });
    expect(fresh.summary.state).toBe("fail");
    expect(open).toHaveBeenCalledTimes(1);

    // The board's next render sees what the thread page read.
    expect(await readVerdictCached("v1", POINTERS, [ws.root])).toBe(fresh);
    expect(open).toHaveBeenCalledTimes(1);
  });

  it("keeps versions apart", async () => {
    const v1 = await readVerdictCached("v1", POINTERS, [ws.root]);
    await ws.write(FILE, JSON.stringify({ passed: false }));
    const v2 = await readVerdictCached("v2", POINTERS, [ws.root]);
    expect([v1.summary.state, v2.summary.state]).toEqual(["pass", "fail"]);
  });

  it("re-reads when the same version is asked with different pointers, roots or inline verdict", async () => {
    const first = await readVerdictCached("v1", POINTERS, [ws.root]);
    expect(await readVerdictCached("v1", POINTERS, [])).not.toBe(first);
    const inline = await readVerdictCached("v1", POINTERS, [ws.root], { inlineVerdict: { passed: false } });
    expect(inline.summary.state).toBe("fail");
    const other = await readVerdictCached("v1", [{ kind: "verification", ref: "gone.json" }], [ws.root]);
    expect(other.summary.state).toBe("missing");
  });

  it("shares one read between concurrent requests for a version", async () => {
    const open = vi.spyOn(fs, "open");
    const [a, b] = await Promise.all([
      readVerdictCached("v1", POINTERS, [ws.root]),
      readVerdictCached("v1", POINTERS, [ws.root]),
    ]);
    expect(a).toBe(b);
    expect(open).toHaveBeenCalledTimes(1);
  });

  it("does not keep a failed read", async () => {
    // A pointer kind the DTO does not know makes the reading fail its output schema.
    const bogus = [{ kind: "bogus", ref: "x.json" }] as unknown as VerdictPointer[];
    await expect(readVerdictCached("v1", bogus, [])).rejects.toThrow(/kind/);
    expect(verdictCacheSize()).toBe(0);
    await expect(readVerdictCached("v1", POINTERS, [ws.root])).resolves.toMatchObject({ summary: { state: "pass" } });
    expect(verdictCacheSize()).toBe(1);
  });

  it("holds BATON_VERDICT_CACHE_ENTRIES, or a quarter more than the whole board's cards when that is more", () => {
    fitVerdictCacheToBoard(0);
    expect(verdictCacheLimit()).toBe(2000);
    fitVerdictCacheToBoard(4000);
    expect(verdictCacheLimit()).toBe(5000);
    fitVerdictCacheToBoard(100);
    expect(verdictCacheLimit()).toBe(2000);
  });

  it("holds at most its limit, dropping the least recently used", async () => {
    const VERDICT_CACHE_MAX_ENTRIES = verdictCacheLimit();
    const first = new Map<string, unknown>();
    for (let index = 0; index < VERDICT_CACHE_MAX_ENTRIES; index += 1) {
      first.set(`v${index}`, await readVerdictCached(`v${index}`, [], []));
    }
    expect(verdictCacheSize()).toBe(VERDICT_CACHE_MAX_ENTRIES);
    expect(await readVerdictCached("v0", [], [])).toBe(first.get("v0")); // now the most recently used
    await readVerdictCached("extra", [], []);
    expect(verdictCacheSize()).toBe(VERDICT_CACHE_MAX_ENTRIES);
    expect(await readVerdictCached("v0", [], [])).toBe(first.get("v0"));
    expect(await readVerdictCached("v2", [], [])).toBe(first.get("v2"));
    // v1 was the least recently used when "extra" arrived: it was dropped and is read anew.
    expect(await readVerdictCached("v1", [], [])).not.toBe(first.get("v1"));
  });
});
