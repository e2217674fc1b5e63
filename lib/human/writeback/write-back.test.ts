import { spawn } from "node:child_process";
import { renameSync, writeFileSync } from "node:fs";
import { lstat, mkdir, mkdtemp, open, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setImmediate as nextTurn, setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { parsesAsJson, SETTLE_WAIT_MS, writeBackHandoff, type WriteBackOutcome } from "./write-back";

// Times Baton's synchronous stat-then-rename, to tell its one documented open window from a real loss.
const batonRenames = vi.hoisted(() => ({ statted: 0n, windows: [] as { statted: bigint; renamed: bigint }[] }));
vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs")>();
  const statSync = ((...args: Parameters<typeof fs.statSync>) => {
    batonRenames.statted = process.hrtime.bigint();
    return fs.statSync(...args);
  }) as typeof fs.statSync;
  const renameSync: typeof fs.renameSync = (from, to) => {
    fs.renameSync(from, to);
    const byBaton = String(from).includes("/.handoff.json."); // not the test's agent
    if (byBaton) batonRenames.windows.push({ statted: batonRenames.statted, renamed: process.hrtime.bigint() });
  };
  return { ...fs, statSync, renameSync };
});

let dir = "";
let file = "";
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "baton-writeback-"));
  file = path.join(dir, "handoff.json");
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

// The agent's packet is {"agent":N,...}; Baton's rendering adds a `human` section.
const agentOf = (text: string) => (JSON.parse(text) as { agent: number }).agent;
const holdsVersion = (ingested: number) => (text: string) => {
  try {
    return agentOf(text) === ingested;
  } catch {
    return false;
  }
};
const render = (text: string) => JSON.stringify({ ...JSON.parse(text), human: { note: "looks good" } });
const batonTempFiles = async () => (await readdir(dir)).filter((name) => name.startsWith(".handoff.json."));

describe("writeBackHandoff", () => {
  it("writes when the file holds the ingested version", async () => {
    await writeFile(file, '{"agent":1}');
    const outcome = await writeBackHandoff({ path: file, holdsIngestedVersion: holdsVersion(1), render });
    expect(outcome).toEqual({ kind: "written" });
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({ agent: 1, human: { note: "looks good" } });
    expect(await batonTempFiles()).toEqual([]);
  });

  it("reports the agent's text and leaves the file untouched when the agent moved on", async () => {
    await writeFile(file, '{"agent":2}');
    const before = await stat(file);
    const outcome = await writeBackHandoff({ path: file, holdsIngestedVersion: holdsVersion(1), render });
    expect(outcome).toEqual({ kind: "agent_changed", text: '{"agent":2}' });
    const after = await stat(file);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
    expect(await batonTempFiles()).toEqual([]);
  });

  it("reports a missing file", async () => {
    const outcome = await writeBackHandoff({ path: file, holdsIngestedVersion: holdsVersion(1), render });
    expect(outcome).toEqual({ kind: "missing" });
    expect(await readdir(dir)).toEqual([]);
  });

  // The next three place an agent write at a chosen point: render runs after the
  // first read, the second holds check runs just before the rename.
  it.each([
    ["rewrites the file in place", () => writeFileSync(file, '{"agent":2}')],
    [
      "renames a new file into place",
      () => {
        writeFileSync(`${file}.agent`, '{"agent":2}');
        renameSync(`${file}.agent`, file);
      },
    ],
  ])("backs off when the agent %s while the temp file is written", async (_how, agentWrites) => {
    await writeFile(file, '{"agent":1}');
    const outcome = await writeBackHandoff({
      path: file,
      holdsIngestedVersion: holdsVersion(1),
      render: (text) => {
        agentWrites();
        return render(text);
      },
    });
    expect(outcome).toEqual({ kind: "agent_changed", text: '{"agent":2}' });
    expect(await readFile(file, "utf8")).toBe('{"agent":2}');
    expect(await batonTempFiles()).toEqual([]);
  });

  it("starts over when the agent renames in a file that still holds the ingested version", async () => {
    await writeFile(file, '{"agent":1}');
    let renders = 0;
    const outcome = await writeBackHandoff({
      path: file,
      holdsIngestedVersion: holdsVersion(1),
      render: (text) => {
        if (++renders === 1) {
          writeFileSync(`${file}.agent`, '{"agent":1,"touched":true}');
          renameSync(`${file}.agent`, file);
        }
        return render(text);
      },
    });
    expect(outcome).toEqual({ kind: "written" });
    expect(renders).toBe(2);
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({ agent: 1, touched: true, human: { note: "looks good" } });
  });

  it("puts back an in-place agent write that lands in the old file after the last check", async () => {
    await writeFile(file, '{"agent":1}');
    let checks = 0;
    const outcome = await writeBackHandoff({
      path: file,
      holdsIngestedVersion: (text) => {
        const holds = holdsVersion(1)(text);
        if (holds && ++checks === 2) writeFileSync(file, '{"agent":2}'); // judged on the text read before this write
        return holds;
      },
      render,
    });
    expect(outcome).toEqual({ kind: "agent_changed", text: '{"agent":2}' });
    expect(await readFile(file, "utf8")).toBe('{"agent":2}');
    expect(await batonTempFiles()).toEqual([]);
  });

  it("writes through a symlink to the real file, keeping the link", async () => {
    const real = path.join(dir, "real.json");
    await writeFile(real, '{"agent":1}');
    await symlink(real, file);
    expect(await writeBackHandoff({ path: file, holdsIngestedVersion: holdsVersion(1), render })).toEqual({ kind: "written" });
    expect((await lstat(file)).isSymbolicLink()).toBe(true);
    expect(agentOf(await readFile(real, "utf8"))).toBe(1);
    expect(await readFile(real, "utf8")).toContain('"human"');
  });

  it("refuses to write through a symlink to a file outside the packet's own folder, leaving both as they were", async () => {
    const outside = await mkdtemp(path.join(tmpdir(), "baton-writeback-outside-"));
    try {
      const target = path.join(outside, "victim.json");
      await writeFile(target, '{"agent":1}');
      await symlink(target, file);
      expect(await writeBackHandoff({ path: file, holdsIngestedVersion: holdsVersion(1), render })).toEqual({ kind: "outside_folder" });
      expect(await readFile(target, "utf8")).toBe('{"agent":1}');
      expect((await lstat(file)).isSymbolicLink()).toBe(true);
      expect(await readdir(outside)).toEqual(["victim.json"]);
      expect(await batonTempFiles()).toEqual([]);

      // A relative link climbing out is the same.
      await rm(file);
      await symlink(path.relative(dir, target), file);
      expect((await writeBackHandoff({ path: file, holdsIngestedVersion: holdsVersion(1), render })).kind).toBe("outside_folder");
      expect(await readFile(target, "utf8")).toBe('{"agent":1}');
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it("writes through a symlink to a file below its own folder, and into a folder reached through a symlink", async () => {
    await mkdir(path.join(dir, "kept"));
    const real = path.join(dir, "kept", "real.json");
    await writeFile(real, '{"agent":1}');
    await symlink(real, file);
    expect(await writeBackHandoff({ path: file, holdsIngestedVersion: holdsVersion(1), render })).toEqual({ kind: "written" });
    expect(await readFile(real, "utf8")).toContain('"human"');

    // The folder itself is a link (a workspace mounted elsewhere): its real folder is the packet's folder.
    const linkedFolder = `${dir}-linked`;
    await symlink(path.join(dir, "kept"), linkedFolder);
    try {
      expect(await writeBackHandoff({ path: path.join(linkedFolder, "real.json"), holdsIngestedVersion: (text) => text.includes('"human"'), render })).toEqual({ kind: "written" });
    } finally {
      await rm(linkedFolder);
    }
  });

  it("runs write-backs to one path one at a time", async () => {
    await writeFile(file, '{"agent":1}');
    let active = 0;
    let most = 0;
    const countingRender = (text: string) => {
      most = Math.max(most, ++active);
      return render(text);
    };
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, () =>
        writeBackHandoff({ path: file, holdsIngestedVersion: holdsVersion(1), render: countingRender }).finally(() => active--),
      ),
    );
    expect(outcomes.every((outcome) => outcome.kind === "written")).toBe(true);
    expect(most).toBe(1);
  });
});

/**
 * An agent that edits the file over and over, in bursts: each edit reads the file
 * and writes {"agent":N,"read":M}, M being the agent number it read. If Baton
 * destroys edit N, the agent's next read finds something else, so edit N+1's `read`
 * is not N. Each edit also records when its write hit the path (monotonic ns).
 */
interface AgentEdit {
  read: number;
  start: bigint;
  end: bigint;
}
type Style = "in place" | "by rename";

const AGENT = String.raw`
const fs = require("node:fs");
const [file, style, stopFile] = process.argv.slice(1);
const now = () => process.hrtime.bigint().toString();
const edits = [];
const deadline = Date.now() + 10_000;
const pause = new Int32Array(new SharedArrayBuffer(4));
while (!fs.existsSync(stopFile) && Date.now() < deadline) {
  const burstEnd = Date.now() + Math.random() * 5;
  do {
    const read = JSON.parse(fs.readFileSync(file, "utf8")).agent;
    const text = JSON.stringify({ agent: edits.length + 1, read });
    let start;
    if (style === "in place") { start = now(); fs.writeFileSync(file, text); }
    else { fs.writeFileSync(file + ".agent", text); start = now(); fs.renameSync(file + ".agent", file); }
    edits.push({ read, start, end: now() });
  } while (Date.now() < burstEnd);
  // A pause that holds the agent as a busy loop would, without spinning a core.
  Atomics.wait(pause, 0, 0, Math.random() * 30);
}
process.stdout.write(JSON.stringify(edits));
`;

function childAgent(style: Style, stopFile: string): () => Promise<AgentEdit[]> {
  const child = spawn(process.execPath, ["-e", AGENT, file, style, stopFile], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<AgentEdit[]>((resolve, reject) =>
    child.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`agent exited ${code}`));
      const edits = JSON.parse(out) as { read: number; start: string; end: string }[];
      resolve(edits.map((edit) => ({ read: edit.read, start: BigInt(edit.start), end: BigInt(edit.end) })));
    }),
  );
  return async () => {
    await writeFile(stopFile, "");
    return exited;
  };
}

/** The same agent as an async loop in this process. It renames synchronously, so its rename never lands inside Baton's synchronous stat-then-rename. */
function loopAgent(style: Style): () => Promise<AgentEdit[]> {
  let stopped = false;
  const edits: AgentEdit[] = [];
  const done = (async () => {
    while (!stopped) {
      const read = agentOf(await readFile(file, "utf8"));
      const text = JSON.stringify({ agent: edits.length + 1, read });
      const start = process.hrtime.bigint();
      if (style === "in place") await writeFile(file, text);
      else {
        writeFileSync(`${file}.agent`, text);
        renameSync(`${file}.agent`, file);
      }
      edits.push({ read, start, end: process.hrtime.bigint() });
      await sleep(Math.random() < 0.7 ? 0 : Math.random() * 30); // bursts, with pauses long enough for a write-back to finish
    }
  })();
  return async () => {
    stopped = true;
    await done;
    return edits;
  };
}

describe.each(["in place", "by rename"] as const)("an agent writing %s while Baton writes back", (style) => {
  it.each(["an async loop", "a child process"] as const)("from %s: no edit lost, the file always whole JSON", async (driver) => {
    await writeFile(file, JSON.stringify({ agent: 0, read: null }));
    batonRenames.windows = [];

    let racing = true;
    const brokenReads: string[] = [];
    const reader = (async () => {
      while (racing) {
        const text = await readSnapshot(file);
        // An in-place agent's own truncate-then-write shows an empty file for an instant; nobody else can prevent that.
        if (!(text === "" && style === "in place") && !parsesAsJson(text)) brokenReads.push(text);
        await nextTurn();
      }
    })();

    const stopAgent = driver === "a child process" ? childAgent(style, path.join(dir, "stop")) : loopAgent(style);
    let ingested = 0;
    const outcomes: WriteBackOutcome[] = [];
    let edits: AgentEdit[] = [];
    try {
      for (let i = 0; i < 200; i++) {
        const outcome = await writeBackHandoff({ path: file, holdsIngestedVersion: holdsVersion(ingested), render });
        outcomes.push(outcome);
        // (On a loaded machine an in-place write can outlast write-back's settling: then the text is
        // its half, which a caller cannot ingest either; the agent's whole file comes later.)
        if (outcome.kind === "agent_changed" && parsesAsJson(outcome.text)) ingested = agentOf(outcome.text);
        await (i % 2 ? nextTurn() : sleep(1));
      }
    } finally {
      edits = await stopAgent();
      racing = false;
      await reader;
    }

    const finalText = await readFile(file, "utf8");
    const reported = new Set(outcomes.flatMap((o) => (o.kind === "agent_changed" && parsesAsJson(o.text) ? [agentOf(o.text)] : [])));
    // Edit N survived if the agent's next edit read it back or, for the last edit, if it is on disk.
    const survived = (n: number) => (n < edits.length ? edits[n]!.read === n : agentOf(finalText) === n);
    const lost = edits.map((_, i) => i + 1).filter((n) => !survived(n) && !reported.has(n));
    // The windows left open (docs/decisions/015-write-back.md): an agent rename landing between
    // Baton's last stat and its rename; an in-place write opened before Baton's rename that
    // takes longer than the settle wait to finish (a loaded machine stretches it).
    const settleWait = BigInt(SETTLE_WAIT_MS) * 1_000_000n;
    const inOpenWindow = (n: number) => {
      const edit = edits[n - 1]!;
      if (style === "by rename") return batonRenames.windows.some((w) => edit.start <= w.renamed && edit.end >= w.statted);
      return edit.end - edit.start > settleWait && batonRenames.windows.some((w) => edit.start <= w.renamed && edit.end >= w.renamed);
    };

    // A loss outside the windows has failed 1 run in 4 on a loaded CI (in place, async loop) and never
    // here: say what it looked like, so that the failure itself tells a bug from a misread window.
    for (const n of lost.filter((n) => !inOpenWindow(n))) {
      const edit = edits[n - 1]!;
      const ms = (at: bigint) => Number(at - edit.start) / 1e6;
      const near = batonRenames.windows.filter((w) => Math.abs(ms(w.renamed)) < 500).map((w) => `stat ${ms(w.statted)} / rename ${ms(w.renamed)}`);
      console.info(`edit ${n} of ${edits.length} lost: took ${ms(edit.end)} ms, read ${edit.read}, the next edit read ${edits[n]?.read}; Baton's renames (ms from its start): ${near.join(", ") || "none within 500 ms"}`);
    }
    expect(brokenReads).toEqual([]);
    expect(parsesAsJson(finalText)).toBe(true);
    expect(lost.filter((n) => !inOpenWindow(n))).toEqual([]);
    expect(outcomes.some((o) => o.kind === "missing")).toBe(false);
    expect(await batonTempFiles()).toEqual([]);
    // The race must really have gone both ways.
    const written = outcomes.filter((o) => o.kind === "written").length;
    expect(written).toBeGreaterThan(5);
    expect(reported.size).toBeGreaterThan(5);
    console.info(`${style}, ${driver}: ${edits.length} agent edits, ${written} written, ${reported.size} reported, ${lost.length} lost in the open window`);
  });
});

/** The reader's one buffer: it reads thousands of times a test, one read at a time (a new 64 KiB buffer each was most of its CPU). */
const snapshotBuffer = Buffer.allocUnsafe(64 * 1024);

/** Reads the file in one read: readFile (stops at the size it stat-ed first) can stitch two versions of a file rewritten in place together. */
async function readSnapshot(target: string): Promise<string> {
  const handle = await open(target, "r");
  try {
    const { bytesRead } = await handle.read({ buffer: snapshotBuffer });
    return snapshotBuffer.toString("utf8", 0, bytesRead);
  } finally {
    await handle.close();
  }
}
