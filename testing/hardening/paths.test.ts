import { realpathSync } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import fc from "fast-check";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { recordAttempts, recordFigure } from "@/testing/reliability";
import { readVerdict, type VerdictPointer } from "../../lib/views/verdict/read";
import { isInside } from "../../lib/views/verdict/safe-path";
import { makeTempWorkspace, type TempWorkspace } from "@/testing/temp-workspace";

/**
 * Paths (issue 8, item 6): generated verdict-pointer paths fed to readVerdict, the
 * reader behind the thread page, with a canary file outside the roots. Every path
 * is read from inside a root or not at all: every file the reader opens (fs.open,
 * spied) is inside a root, the canary is never opened, and its marker never
 * appears in a result.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 20_260_714);
const SECTION = "paths";
const MARKER = `CANARY-${process.pid}-${Date.now()}`;
const report = (detail: string) => JSON.stringify({ passed: false, findings: [{ severity: "block", detail }] });

let ws: TempWorkspace;
let roots: string[] = [];
let canary = "";
const tally = { paths: 0, ok: 0, refused: 0, missing: 0, other: 0, opened: 0, escaped: 0 };

beforeAll(async () => {
  ws = await makeTempWorkspace();
  canary = await ws.write("outside/canary.json", report(MARKER));
  await ws.write("canary.json", report(MARKER));
  await ws.write("ws/outputs/verification/T-1.json", report("inside the root"));
  await ws.write("ws/outputs/review/R-1.json", JSON.stringify({ total: 8, verdict: "pass" }));
  await ws.write("ws2/outputs/only-in-second.json", report("second root"));
  // Symlinks inside the roots pointing out, absolute and relative, to files and folders.
  await ws.symlink(canary, "ws/outputs/verification/abs-out.json");
  await ws.symlink("../../../outside/canary.json", "ws/outputs/verification/rel-out.json");
  await ws.symlink(path.join(ws.base, "outside"), "ws/outputs/dir-out");
  await ws.symlink("../outside", "ws2/dir-out");
  await ws.symlink("..", "ws/outputs/up");
  await ws.symlink("/", "ws/outputs/slash");
  await ws.symlink("T-1.json", "ws/outputs/verification/inside.json");
  await ws.symlink("loop-b", "ws/outputs/loop-a");
  await ws.symlink("loop-a", "ws/outputs/loop-b");
  roots = [ws.root, path.join(ws.base, "ws2")];
});

afterEach(() => {
  vi.restoreAllMocks();
});

afterAll(async () => {
  if (tally.paths) {
    recordFigure(SECTION, "verdict-pointer paths tried", tally.paths, `fast-check seed ${SEED}; canary file outside both roots`);
    recordAttempts(SECTION, "verdict-pointer paths (traversal, links, absolute, encoded)", tally.paths, tally.escaped, "got through: the canary outside both roots opened or its content shown");
    recordFigure(SECTION, "read from inside a root", tally.ok);
    recordFigure(SECTION, "refused", tally.refused);
    recordFigure(SECTION, "missing inside a root", tally.missing);
    recordFigure(SECTION, "other answers (invalid, link)", tally.other);
    recordFigure(SECTION, "files opened, all inside a root", tally.opened, "every fs.open by the reader checked; the canary never opened");
  }
  await ws.remove();
});

const SEGMENTS = [
  "..", ".", "", "outputs", "verification", "review", "T-1.json", "R-1.json", "canary.json", "outside", "ws", "ws2",
  "abs-out.json", "rel-out.json", "dir-out", "up", "slash", "inside.json", "loop-a", "only-in-second.json", "etc", "passwd",
  "%2e%2e", "%2E%2E", "%252e%252e", "..%2f", "%2f", "%5c", "%00", "..%c0%af", "%u002e%u002e", "%%32%65",
  "\u2024\u2024", "\uff0e\uff0e", "\u2025", "\u0660\u0660", ".\u200b.", "..\u202e", "...", "....", " ..", ".. ",
  "\0", "canary.json\0.json", "..\\..", "\\", "~", "$HOME", "C:", "\\\\server", "file:", "a".repeat(255),
];
const SEPARATORS = ["/", "/", "/", "//", "\\", "/./", "%2f", "\u2215", "\uff0f"];
const PREFIXES = ["", "", "", "/", "./", "../", "//", "\\\\", "C:\\", "file://", "file:///", "~/", "/proc/self/root/"];

const generatedRef = fc
  .tuple(fc.constantFrom(...PREFIXES), fc.array(fc.tuple(fc.constantFrom(...SEGMENTS), fc.constantFrom(...SEPARATORS)), { minLength: 1, maxLength: 8 }))
  .map(([prefix, parts]) => prefix + parts.map(([segment, separator], i) => (i ? separator : "") + segment).join(""));

const specialRef = fc.oneof(
  fc.constantFrom("outputs/verification/T-1.json", "outputs/verification/inside.json", "./outputs/review/R-1.json", "outputs//verification/T-1.json", "outputs/up/outputs/verification/T-1.json", "outputs/only-in-second.json"),
  fc.constant("<canary>"),
  fc.constant("<canary-relative>"),
  fc.nat({ max: 40 }).map((ups) => `${"../".repeat(ups)}outside/canary.json`),
  fc.nat({ max: 40 }).map((ups) => `outputs/${"up/".repeat(ups)}canary.json`),
  fc.integer({ min: 1, max: 3_000 }).map((length) => `outputs/${"a/".repeat(length)}T-1.json`),
  fc.integer({ min: 1, max: 3_000 }).map((length) => `${"./".repeat(length)}../canary.json`),
  fc.string({ unit: "binary", maxLength: 60 }),
);

function resolveSpecial(ref: string): string {
  if (ref === "<canary>") return canary;
  if (ref === "<canary-relative>") return path.relative(ws.root, canary);
  return ref;
}

async function readAndCheck(ref: string, kind: VerdictPointer["kind"]): Promise<void> {
  const open = vi.spyOn(fs, "open");
  try {
    const reading = await readVerdict([{ kind, ref }], roots);
    tally.paths++;
    const pointer = reading.pointers[0]!;
    const shown = JSON.stringify(reading);
    if (shown.includes(MARKER)) tally.escaped++;
    expect(shown, ref).not.toContain(MARKER);
    const realCanary = realpathSync(canary);
    const realRoots = roots.map((root) => realpathSync(root));
    for (const call of open.mock.calls) {
      const opened = String(call[0]);
      tally.opened++;
      if (opened === realCanary) tally.escaped++;
      expect(opened, ref).not.toBe(realCanary);
      expect(realRoots.some((root) => isInside(root, opened)), `${ref} opened ${opened}`).toBe(true);
    }
    if (pointer.status === "ok") tally.ok++;
    else if (pointer.status === "refused") tally.refused++;
    else if (pointer.status === "missing") tally.missing++;
    else tally.other++;
    if (pointer.status === "ok") expect(open.mock.calls.length, ref).toBe(1);
  } finally {
    open.mockRestore();
  }
}

describe("verdict pointers never read outside the workspace roots", () => {
  it("the canary's marker would show if the canary were read (control)", async () => {
    await ws.write("ws/outputs/canary-copy.json", report(MARKER));
    const reading = await readVerdict([{ kind: "verification", ref: "outputs/canary-copy.json" }], roots);
    expect(JSON.stringify(reading)).toContain(MARKER);
    await fs.rm(path.join(ws.root, "outputs/canary-copy.json"));
  });

  it("reads what is inside and refuses what points out (fixed cases)", async () => {
    const statusOf = async (ref: string) => (await readVerdict([{ kind: "verification", ref }], roots)).pointers[0]!.status;
    expect(await statusOf("outputs/verification/T-1.json")).toBe("ok");
    expect(await statusOf("outputs/verification/inside.json")).toBe("ok");
    expect(await statusOf("outputs/only-in-second.json")).toBe("ok");
    // A symlink that stays inside the root: what it leads to is looked up inside too.
    expect(await statusOf("outputs/up/canary.json")).toBe("missing");
    for (const ref of ["outputs/verification/abs-out.json", "outputs/verification/rel-out.json", "outputs/dir-out/canary.json", "outputs/up/../canary.json", "dir-out/canary.json", "outputs/slash/etc/passwd"]) {
      expect(await statusOf(ref), ref).toBe("refused");
    }
  });

  it("answers 1,200 generated paths from inside a root or not at all", async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof({ weight: 4, arbitrary: generatedRef }, { weight: 1, arbitrary: specialRef }), fc.constantFrom<VerdictPointer["kind"]>("verification", "review", "other"), async (ref, kind) => {
        await readAndCheck(resolveSpecial(ref), kind);
      }),
      { seed: SEED, numRuns: 1_200, endOnFailure: true },
    );
    expect(tally.paths).toBeGreaterThanOrEqual(1_200);
    expect(tally.ok).toBeGreaterThan(0);
    expect(tally.refused).toBeGreaterThan(tally.paths / 2);
  });
});
