import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { database } from "../../db/client";
import { useTempDatabase } from "@/testing/temp-database";
import { watchHandoffFolders, type FolderWatcher } from "./folder-watcher";
import { ingestHandoffFile } from "./ingest-file";

let temp: Awaited<ReturnType<typeof useTempDatabase>>;
let root: string;
let watcher: FolderWatcher;
const startupFile = () => path.join(root, "startup", "handoff.json");

// The watcher is quiet on purpose when it refuses a file; keep the test output readable.
vi.spyOn(console, "warn").mockImplementation(() => undefined);

beforeAll(async () => {
  temp = await useTempDatabase();
  root = mkdtempSync(path.join(tmpdir(), "baton-watch-"));
  write(startupFile(), packet("startup"));
  watcher = watchHandoffFolders([root]);
  await watcher.ready;
});
afterAll(async () => {
  await watcher?.close();
  await temp?.dispose();
  if (root) rmSync(root, { recursive: true, force: true });
});

function packet(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    project: "watch",
    branch: name,
    summary: `packet ${name}`,
    changed_files: ["src/a.ts"],
    commands_run: ["npm test"],
    failed_attempts: [],
    open_risks: [{ severity: "low", detail: "helper is long" }],
    next_action: `continue ${name}`,
    verdict_pointer: "outputs/verification/T-1.json",
    ...extra,
  };
}

function write(file: string, content: Record<string, unknown> | string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content, null, 2));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const waitOptions = { timeout: 20_000, interval: 100 };

async function versionsAt(file: string) {
  const db = await database();
  return db.packetVersion.findMany({ where: { sourcePath: file }, orderBy: { receivedAt: "asc" } });
}

async function ingestErrorsFor(file: string) {
  const db = await database();
  const events = await db.ledgerEvent.findMany({ where: { kind: "ingest_error" } });
  return events.filter((event) => (JSON.parse(event.data) as { source_path?: string }).source_path === file);
}

async function waitForVersions(file: string, count: number) {
  return vi.waitFor(async () => {
    const versions = await versionsAt(file);
    expect(versions).toHaveLength(count);
    return versions;
  }, waitOptions);
}

/** The one ingest_error recorded for `file`: waited for, and still one once the watcher has settled. */
async function theIngestErrorFor(file: string) {
  const [event] = await vi.waitFor(async () => {
    const events = await ingestErrorsFor(file);
    expect(events).toHaveLength(1);
    return events;
  }, waitOptions);
  await settle();
  expect(await ingestErrorsFor(file)).toHaveLength(1);
  return event!;
}

/**
 * Lets any event still on its way (write-finish delay) reach the queue, then drains it.
 * Real time on purpose: it is the window in which a second ingest would show; 600 ms is
 * about three times chokidar's write-finish wait (200 ms stable, polled every 50 ms).
 */
async function settle() {
  await sleep(600);
  await watcher.idle();
}

describe("watchHandoffFolders", () => {
  it("ingests a handoff.json that existed before it started", async () => {
    const [version] = await waitForVersions(startupFile(), 1);
    expect(version!.source).toBe("file");
    expect(JSON.parse(version!.receivedJson)).toEqual(packet("startup"));
    const db = await database();
    const event = await db.ledgerEvent.findFirstOrThrow({ where: { kind: "packet_received", versionId: version!.id } });
    expect(event.actor).toBe("watcher");
    expect(JSON.parse(event.data)).toMatchObject({ source: "file", source_path: startupFile() });
  });

  it("ingests a new workbench file and records the workspace root", async () => {
    const file = path.join(root, "ws", "outputs", "handoff", "sess-42", "handoff.json");
    write(file, packet("workbench", { session_id: "sess-42" }));
    const [version] = await waitForVersions(file, 1);
    expect(version!.workspaceRoot).toBe(path.join(root, "ws"));
    expect(version!.sessionId).toBe("sess-42");
  });

  it("ingests a file written in two chunks once, complete", async () => {
    const file = path.join(root, "chunked", "handoff.json");
    mkdirSync(path.dirname(file), { recursive: true });
    const text = JSON.stringify(packet("chunked", { summary: "written in two steps ".repeat(50) }), null, 2);
    const middle = Math.floor(text.length / 2);
    const handle = await open(file, "w");
    try {
      await handle.write(text.slice(0, middle));
      await handle.sync();
      await sleep(700);
      await handle.write(text.slice(middle));
    } finally {
      await handle.close();
    }

    const [version] = await waitForVersions(file, 1);
    await settle();
    const versions = await versionsAt(file);
    expect(versions).toHaveLength(1);
    expect(versions[0]!.id).toBe(version!.id);
    expect(JSON.parse(version!.receivedJson)).toEqual(JSON.parse(text));
    expect(await ingestErrorsFor(file)).toEqual([]);
  });

  it("records a file that stays invalid as one ingest_error", async () => {
    const file = path.join(root, "broken", "handoff.json");
    write(file, '{"summary": "truncated');
    // The watcher waits for an unparsable file to stay unchanged for 2 s before reporting it.
    const event = await theIngestErrorFor(file);
    expect(event.actor).toBe("watcher");
    expect(JSON.parse(event.data)).toMatchObject({ code: "invalid_json", source_path: file });
    expect(await versionsAt(file)).toEqual([]);
  });

  it("stores a new version when a file's content changes", async () => {
    const file = path.join(root, "changing", "handoff.json");
    write(file, packet("changing", { summary: "first" }));
    const [first] = await waitForVersions(file, 1);
    await settle();
    write(file, packet("changing", { summary: "second" }));
    const versions = await waitForVersions(file, 2);
    expect(versions.map((version) => version.summary)).toEqual(["first", "second"]);
    expect(versions[0]!.id).toBe(first!.id);
    const db = await database();
    const thread = await db.thread.findUniqueOrThrow({ where: { key: "watch@changing" } });
    expect(thread.activeVersionId).toBe(versions[1]!.id);
  });

  it("ignores files that are not handoff files", async () => {
    const folder = path.join(root, "others");
    const ignored = ["other.json", "handoff.json.bak", "Handoff.JSON", "notes.md", "handoff.md.bak", "thoughts/handoffs/x.md", "shared/handoffs/y.md"].map((name) =>
      path.join(folder, name),
    );
    for (const [index, file] of ignored.entries()) write(file, packet(`ignored-${index}`));
    // Written after them: once it is in and settle() has passed, an ingested ignored file would show.
    const sentinel = path.join(folder, "handoff.json");
    write(sentinel, packet("sentinel"));
    await waitForVersions(sentinel, 1);
    await settle();

    const db = await database();
    const stored = await db.packetVersion.findMany({ where: { sourcePath: { startsWith: folder } }, select: { sourcePath: true } });
    expect(stored.map((version) => version.sourcePath)).toEqual([sentinel]);
    expect(await db.thread.count({ where: { branch: { startsWith: "ignored-" } } })).toBe(0);
  });
});

describe("Markdown handoffs in watched folders", () => {
  const formats = path.join(process.cwd(), "testing/fixtures/formats");
  const fixture = (name: string) => readFileSync(path.join(formats, name), "utf8");

  it("ingests HANDOFF.md, HANDOVER.md, handoff.md and any .md below thoughts/shared/handoffs/, the text kept verbatim", async () => {
    const files = [
      [path.join(root, "md", "HANDOFF.md"), fixture("HANDOFF.md")],
      [path.join(root, "md", "other", "HANDOVER.md"), fixture("HANDOVER.md")],
      [path.join(root, "md", "lower", "handoff.md"), "# Handoff\n\n## Next steps\n- lower-case name\n"],
      [path.join(root, "md", "thoughts", "shared", "handoffs", "LED-212", "2026-11-30_16-42-10_LED-212_retries.md"), fixture("humanlayer-create-handoff.md")],
    ] as const;
    for (const [file, text] of files) write(file, text);
    for (const [file, text] of files) {
      const [version] = await waitForVersions(file, 1);
      expect((JSON.parse(version!.receivedJson) as { received_markdown: { text: string } }).received_markdown.text).toBe(text);
      expect((JSON.parse(version!.flags) as { code: string }[]).map((flag) => flag.code)).toContain("mapped_from");
    }
    const [humanlayer] = await versionsAt(files[3][0]);
    expect(humanlayer!.nextAction).toMatch(/^Add exponential back-off/);
  });

  it("records a Markdown handoff that does not parse as one ingest_error naming the file and the reason", async () => {
    const file = path.join(root, "md-broken", "HANDOFF.md");
    write(file, "---\ntitle: never closed\n\n## Next steps\n- x\n");
    const event = await theIngestErrorFor(file);
    expect(JSON.parse(event.data)).toMatchObject({ code: "invalid_markdown", source_path: file, message: expect.stringContaining("never closed") });
    expect(await versionsAt(file)).toEqual([]);
  });
});

describe("ingestHandoffFile", () => {
  let folder: string;
  beforeAll(() => {
    folder = mkdtempSync(path.join(tmpdir(), "baton-file-"));
  });
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  const fast = { settleMs: 300, pollMs: 50, maxWaitMs: 5000 };

  it("reports one invalid content once, however often it is seen", async () => {
    const file = path.join(folder, "invalid", "handoff.json");
    write(file, "{ not json at all");
    const first = await ingestHandoffFile(file, fast);
    expect(first.kind).toBe("invalid");
    expect(first.kind === "invalid" && first.error.code).toBe("invalid_json");
    const second = await ingestHandoffFile(file, fast);
    expect(second.kind).toBe("invalid");
    const events = await ingestErrorsFor(file);
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]!.data)).toMatchObject({ code: "invalid_json", source_path: file });
    expect(await versionsAt(file)).toEqual([]);
  });

  it("reports a parsable body that is not a packet at once", async () => {
    const file = path.join(folder, "not-a-packet", "handoff.json");
    write(file, JSON.stringify({ title: "no core field" }));
    const started = Date.now();
    const outcome = await ingestHandoffFile(file, { ...fast, settleMs: 5000 });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(outcome.kind === "invalid" && outcome.error.code).toBe("no_core_fields");
    expect(await ingestErrorsFor(file)).toHaveLength(1);
  });

  it("waits for a half-written file to be completed", async () => {
    const file = path.join(folder, "half", "handoff.json");
    const text = JSON.stringify(packet("half"));
    write(file, text.slice(0, 20));
    const outcome = ingestHandoffFile(file, { settleMs: 2000, pollMs: 50 });
    await sleep(400);
    write(file, text);
    const result = await outcome;
    expect(result.kind).toBe("ingested");
    const versions = await versionsAt(file);
    expect(versions).toHaveLength(1);
    expect(JSON.parse(versions[0]!.receivedJson)).toEqual(packet("half"));
    expect(await ingestErrorsFor(file)).toEqual([]);
  });

  it("ingests the same file twice as one version and answers gone for a missing file", async () => {
    const file = path.join(folder, "twice", "handoff.json");
    write(file, packet("twice"));
    const first = await ingestHandoffFile(file, fast);
    const second = await ingestHandoffFile(file, fast);
    expect(first.kind === "ingested" && first.result.duplicate).toBe(false);
    expect(second.kind === "ingested" && second.result).toMatchObject({
      duplicate: true,
      packet_id: first.kind === "ingested" ? first.result.packet_id : "",
    });
    expect(await ingestHandoffFile(path.join(folder, "missing", "handoff.json"), fast)).toEqual({ kind: "gone" });
  });
});
