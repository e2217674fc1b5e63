import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { database } from "../../lib/db/client";
import { useTempDatabase } from "@/testing/temp-database";
import { watchHandoffFolders, type FolderWatcher } from "../../lib/ingest/watch/folder-watcher";
import { ingestHandoffFile } from "../../lib/ingest/watch/ingest-file";

/**
 * Hostile files in watched folders (hardening, second round, High and Medium findings):
 * a FIFO named handoff.json hung the server's file-system threads for good, a symlink to
 * /dev/zero grew memory without bound, a 400 MB file was read whole before the size
 * check, and a linked folder outside the watched one was ingested. Every wait is bounded.
 */

let temp: Awaited<ReturnType<typeof useTempDatabase>>;
let root: string;
let outside: string;
let watcher: FolderWatcher;

vi.spyOn(console, "warn").mockImplementation(() => undefined);

beforeAll(async () => {
  temp = await useTempDatabase();
  root = mkdtempSync(path.join(tmpdir(), "baton-hostile-watch-"));
  outside = mkdtempSync(path.join(tmpdir(), "baton-outside-"));
});
afterAll(async () => {
  await watcher?.close();
  await temp?.dispose();
  for (const folder of [root, outside]) if (folder) rmSync(folder, { recursive: true, force: true });
});

const packet = (name: string) => JSON.stringify({ project: "hostile", branch: name, summary: `packet ${name}`, next_action: `continue ${name}` });

function fileIn(...parts: string[]): string {
  const file = path.join(root, ...parts, "handoff.json");
  mkdirSync(path.dirname(file), { recursive: true });
  return file;
}

/** Rejects when `promise` takes longer than `ms`: a hang fails the test instead of stalling it. */
function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms).unref())]);
}

describe("files Baton will not read", () => {
  it("refuses five FIFOs named handoff.json at once, and file-system threads stay free", async () => {
    const fifos = Array.from({ length: 5 }, (_, index) => fileIn(`fifo-${index}`));
    for (const fifo of fifos) execFileSync("mkfifo", [fifo]);
    const outcomes = await within(5_000, Promise.all(fifos.map((fifo) => ingestHandoffFile(fifo))), "ingesting five FIFOs");
    for (const outcome of outcomes) {
      expect(outcome.kind).toBe("invalid");
      if (outcome.kind === "invalid") {
        expect(outcome.error.code).toBe("unreadable_file");
        expect(outcome.error.message).toContain("FIFO");
      }
    }
    // Node has four file-system worker threads: had the FIFOs taken them, this read would hang.
    const plain = fileIn("plain");
    writeFileSync(plain, packet("plain"));
    await within(2_000, Promise.all(Array.from({ length: 8 }, () => readFile(plain))), "reading a plain file after the FIFOs");
  });

  it("refuses a handoff.json symlinked to /dev/zero without reading it", async () => {
    const link = fileIn("zero");
    symlinkSync("/dev/zero", link);
    const before = process.memoryUsage().rss;
    const outcome = await within(5_000, ingestHandoffFile(link), "ingesting a link to /dev/zero");
    expect(outcome).toMatchObject({ kind: "invalid", error: { code: "unreadable_file" } });
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);
  });

  it("refuses a 400 MB file by its size on the open handle, never reading it whole", async () => {
    const huge = fileIn("huge");
    writeFileSync(huge, "");
    truncateSync(huge, 400 * 1024 * 1024);
    const before = process.memoryUsage().rss;
    const outcome = await within(5_000, ingestHandoffFile(huge), "ingesting a 400 MB file");
    expect(outcome).toMatchObject({ kind: "invalid", error: { code: "payload_too_large" } });
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);
  });

  it("does not echo a file that is not JSON (a symlinked .env showed its first characters)", async () => {
    const file = fileIn("dotenv");
    writeFileSync(file, "DB_PASSWORD=hunter2-very-secret\n");
    const outcome = await ingestHandoffFile(file, { settleMs: 50, pollMs: 10 });
    expect(outcome.kind).toBe("invalid");
    const db = await database();
    const events = await db.ledgerEvent.findMany({ where: { kind: "ingest_error" } });
    const mine = events.filter((event) => event.data.includes("dotenv"));
    expect(mine).toHaveLength(1);
    expect(mine[0]!.data).not.toMatch(/DB_PASS|hunter2/);
  });
});

describe("the watcher stays inside its folders", () => {
  it("does not follow a linked folder outside the watched one, nor a linked handoff.json", async () => {
    mkdirSync(path.join(outside, "project"), { recursive: true });
    writeFileSync(path.join(outside, "project", "handoff.json"), packet("outside-folder"));
    writeFileSync(path.join(outside, "loose.json"), packet("outside-file"));
    symlinkSync(path.join(outside, "project"), path.join(root, "linked-folder"));
    symlinkSync(path.join(outside, "loose.json"), fileIn("linked-file"));
    const inside = fileIn("inside");
    writeFileSync(inside, packet("inside"));

    watcher = watchHandoffFolders([root], { rescanMs: 50 });
    await watcher.ready;
    const db = await database();
    await vi.waitFor(async () => expect(await db.packetVersion.count({ where: { sourcePath: inside } })).toBe(1), { timeout: 20_000, interval: 100 });
    // Several rescans later (real time: what is checked is that nothing comes), still nothing from outside.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await watcher.idle();
    const branches = (await db.packetVersion.findMany({ select: { branch: true } })).map((version) => version.branch);
    expect(branches).toContain("inside");
    expect(branches).not.toContain("outside-folder");
    expect(branches).not.toContain("outside-file");
  });
});
