// vitest: isolated
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { POST as postPackets } from "../../app/api/v1/packets/route";
import { main } from "../../cli/main";
import { pushPacketFile, type PushTarget } from "../../cli/sync/push";
import { createApiToken } from "../auth/tokens";
import { createFirstAdmin } from "../auth/users";
import type { Person } from "../auth/roles";
import { loadBoard } from "../board/board";
import type { Flag } from "../contract/lint";
import { database } from "../db/client";
import { decide } from "../human/actions";
import { scheduleWriteBack } from "../human/writeback/write-human-section";
import { loadPacket, loadThreadDetail, listThreads } from "../views/threads/flagged";
import { threadFiltersSchema, threadListQuerySchema } from "../views/threads/filters";
import { readVersionVerdicts } from "../views/verdict/version";
import { watchHandoffFolders, type FolderWatcher } from "./watch/folder-watcher";
import { whenLocated } from "../server/background";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { SCENARIOS } from "@/testing/generator/scenarios";

/**
 * Any agent, any arrival order (docs/decisions/050-one-location-per-packet.md,
 * docs/decisions/051-verdict-reports-travel.md, docs/decisions/052-one-source-of-flags.md): the same packet reaches Baton
 * over HTTP and through a watched folder, in each order. Real database, real files, the real
 * folder watcher, the real POST route behind a real HTTP server, the real `baton push` client.
 * In every order the person's decision is written back into the file, the failing verdict
 * is read (from the workspace or the reports sent with the packet), and every view shows
 * the same flags.
 */

freshDatabaseForThisFile();

let person: Person;
let server: Server;
let target: PushTarget;
let base = "";
const watchers: FolderWatcher[] = [];
const keys: string[] = [];

beforeAll(async () => {
  person = await createFirstAdmin({ username: "arrival-admin", password: "a long enough password" });
  base = await mkdtemp(path.join(tmpdir(), "baton-arrival-"));
  server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => {
      void (async () => {
        const headers: [string, string][] = Object.entries(incoming.headers).map(([name, value]) => [name, String(value)]);
        const request = new Request(`${target.url}${incoming.url}`, { method: "POST", headers, body: Buffer.concat(chunks) });
        const response = await postPackets(request, { params: Promise.resolve({}) });
        outgoing.writeHead(response.status, Object.fromEntries(response.headers));
        outgoing.end(Buffer.from(await response.arrayBuffer()));
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  target = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    token: (await createApiToken("arrival", ["packets:write"])).token,
  };
});
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(watchers.splice(0).map((watcher) => watcher.close()));
});
// Registered after freshDatabaseForThisFile's hooks, so it runs before the database goes.
afterAll(async () => {
  await scheduleWriteBack(keys);
  await new Promise((resolve) => server.close(resolve));
  await rm(base, { recursive: true, force: true });
});

/** A watched folder, watched as `npm start` watches BATON_WATCH_DIRS (lib/server/background.ts). */
async function watched(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const watcher = watchHandoffFolders([dir], { rescanMs: 200, onLocated: whenLocated });
  watchers.push(watcher);
  await watcher.ready;
}

const FAILING_REPORT = { task_id: "T-9", passed: false, findings: [{ severity: "high", detail: "rounding test still red" }] };

/** A workspace (the folder holding outputs/) with a failing verification report and a packet without a project. */
async function workspace(dir: string, task: string): Promise<{ file: string; packet: Record<string, unknown> }> {
  const packet = {
    task_id: task,
    summary: `arrival order ${task}`,
    changed_files: ["src/invoice.ts"],
    commands_run: ["npm test"],
    failed_attempts: [],
    open_risks: [],
    next_action: `fix rounding for ${task}`,
    verdict_pointer: { verdict: `outputs/verification/${task}.json` },
  };
  await mkdir(path.join(dir, "outputs", "verification"), { recursive: true });
  await writeFile(path.join(dir, "outputs", "verification", `${task}.json`), JSON.stringify(FAILING_REPORT));
  const file = path.join(dir, "outputs", "handoff", "sess-1", "handoff.json");
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(packet, null, 2)}\n`);
  return { file, packet };
}

async function post(body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${target.url}/api/v1/packets`, {
    method: "POST",
    headers: { authorization: `Bearer ${target.token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

async function versionOf(key: string) {
  return (await database()).packetVersion.findFirstOrThrow({ where: { thread: { key } }, include: { location: true } });
}

/** Waits for the watcher to have stored the file's version (or recorded its location on the stored one). */
async function fileKnown(key: string): Promise<void> {
  await vi.waitFor(
    async () => {
      const version = await (await database()).packetVersion.findFirst({ where: { thread: { key } }, include: { location: true } });
      expect(version?.sourcePath ?? version?.location?.sourcePath).toBeTruthy();
    },
    { timeout: 15_000, interval: 100 },
  );
}

async function approve(key: string): Promise<void> {
  const version = await versionOf(key);
  await decide(person, key, { kind: "approved", packet_id: version.id, base_revision: 0, note: "go ahead" });
}

async function writtenBack(file: string): Promise<void> {
  await vi.waitFor(
    async () => {
      const text = JSON.parse(await readFile(file, "utf8")) as { human?: { decision?: { kind?: string; note?: string } } };
      expect(text.human?.decision).toMatchObject({ kind: "approved", note: "go ahead" });
    },
    { timeout: 15_000, interval: 100 },
  );
}

const codes = (flags: readonly Flag[]) => flags.map((flag) => flag.code);

/** The flags of every view of the thread, at one moment: they must all be the same. */
async function flagsInEveryView(key: string, packet: Record<string, unknown>, file: string) {
  const answer = await post(packet);
  expect(Object.keys(answer.json).sort()).toEqual(["active", "duplicate", "flags", "flags_computed_at", "packet_id", "thread_key"]);
  const pushed = await pushPacketFile(target, file);
  if (!pushed.ok) throw new Error(pushed.message);
  const id = String(answer.json.packet_id);
  const board = await loadBoard(threadFiltersSchema.parse({}), { keys: [key] });
  const card = board.columns.flatMap((column) => column.cards).find((item) => item.key === key)!;
  const list = await listThreads(threadListQuerySchema.parse({ q: key }));
  return {
    card,
    views: {
      "POST answer": answer.json.flags as Flag[],
      "GET /packets/{id}": (await loadPacket(id)).flags,
      "GET /threads/{key}": (await loadThreadDetail(key)).active_packet.flags,
      "GET /threads": list.threads.find((thread) => thread.key === key)!.active_packet.flags,
      "thread page": (await loadThreadDetail(key, { freshVerdict: true })).active_packet.flags,
      board: card.active_packet.flags,
    },
    pushedCodes: pushed.flags,
    computedAt: [answer.json.flags_computed_at, pushed.flagsComputedAt, card.active_packet.flags_computed_at],
  };
}

async function expectSameFlagsEverywhere(key: string, packet: Record<string, unknown>, file: string): Promise<void> {
  const { card, views, pushedCodes, computedAt } = await flagsInEveryView(key, packet, file);
  expect(card.verdict.state).toBe("fail");
  expect(codes(card.active_packet.flags)).toContain("verdict_failed");
  for (const [view, flags] of Object.entries(views)) expect(flags, view).toEqual(card.active_packet.flags);
  expect(pushedCodes, "baton push").toEqual(codes(card.active_packet.flags));
  for (const at of computedAt) expect(Date.parse(String(at))).not.toBeNaN();
}

describe("the same packet over HTTP and through a watched folder", () => {
  it("HTTP first, then the file: its location is recorded, the decision written back, the verdict read", async () => {
    const staging = path.join(base, "staging-http");
    const watchDir = path.join(base, "watch-http");
    await watched(watchDir);
    const { packet } = await workspace(staging, "T-http");
    const first = await post(packet);
    expect(first.status).toBe(201);
    const key = String(first.json.thread_key);
    keys.push(key);
    // Over HTTP alone the report can be read from nowhere: "verdict not sent", not a setup error.
    expect(codes(first.json.flags as Flag[])).toContain("verdict_missing");
    expect((first.json.flags as Flag[]).find((flag) => flag.code === "verdict_missing")!.reason).toContain("verdict not sent");
    await approve(key);

    await rename(staging, path.join(watchDir, "ws"));
    const file = path.join(watchDir, "ws", "outputs", "handoff", "sess-1", "handoff.json");
    await fileKnown(key);
    await writtenBack(file);
    const version = await versionOf(key);
    expect(version.source).toBe("http");
    expect(version.location).toMatchObject({ sourcePath: file, workspaceRoot: path.join(watchDir, "ws") });
    const located = await (await database()).ledgerEvent.findMany({ where: { threadKey: key, kind: "packet_located" } });
    expect(located.map((event) => JSON.parse(event.data) as unknown)).toEqual([{ source_path: file, workspace_root: path.join(watchDir, "ws") }]);
    expect((await (await database()).packetVersion.count({ where: { thread: { key } } }))).toBe(1);
    await expectSameFlagsEverywhere(key, packet, file);
  });

  it("the file first, then HTTP: a duplicate that changes nothing", async () => {
    const watchDir = path.join(base, "watch-file");
    await watched(watchDir);
    const { file, packet } = await workspace(path.join(watchDir, "ws"), "T-file");
    await vi.waitFor(async () => expect(await (await database()).packetVersion.count({ where: { taskId: "T-file" } })).toBe(1), { timeout: 15_000 });
    const key = (await (await database()).packetVersion.findFirstOrThrow({ where: { taskId: "T-file" }, include: { thread: true } })).thread.key;
    keys.push(key);
    await approve(key);
    expect((await post(packet)).status).toBe(200);
    await writtenBack(file);
    expect((await versionOf(key)).location).toBeNull();
    await expectSameFlagsEverywhere(key, packet, file);
  });

  it("baton push first (with its report), then the file", async () => {
    const staging = path.join(base, "staging-push");
    const watchDir = path.join(base, "watch-push");
    await watched(watchDir);
    const { file: stagedFile, packet } = await workspace(staging, "T-push");
    const pushed = await pushPacketFile(target, stagedFile);
    if (!pushed.ok) throw new Error(pushed.message);
    expect(pushed.reportsSent).toBe(1);
    const key = pushed.threadKey;
    keys.push(key);
    // The report travelled with the packet: the verdict is read before any file is known.
    expect(pushed.flags).toContain("verdict_failed");
    const reading = (await readVersionVerdicts([pushed.packetId], { fresh: true })).get(pushed.packetId)!;
    expect(reading.pointers.map((pointer) => [pointer.status, pointer.from])).toEqual([["ok", "attached"]]);
    await approve(key);

    await rename(staging, path.join(watchDir, "ws"));
    const file = path.join(watchDir, "ws", "outputs", "handoff", "sess-1", "handoff.json");
    await fileKnown(key);
    await writtenBack(file);
    const located = (await readVersionVerdicts([pushed.packetId], { fresh: true })).get(pushed.packetId)!;
    expect(located.pointers.map((pointer) => [pointer.status, pointer.from])).toEqual([["ok", "workspace"]]);
    await expectSameFlagsEverywhere(key, packet, file);
  });

  it("baton generate --push inside a watched folder", async () => {
    const bench = await SCENARIOS.find((item) => item.name === "failing-verification")!.build();
    try {
      const watchDir = path.dirname(bench.root);
      await watched(watchDir);
      process.env.BATON_URL = target.url;
      process.env.BATON_TOKEN = target.token;
      const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
      vi.spyOn(console, "error").mockImplementation(() => undefined);
      expect(await main(["generate", "--root", bench.root, "--push"])).toBe(0);
      const file = log.mock.calls.map((call) => String(call[0])).find((line) => line.endsWith("handoff.json"))!;
      const packet = JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;
      const id = (await post(packet)).json.packet_id as string;
      const key = (await (await database()).packetVersion.findUniqueOrThrow({ where: { id }, include: { thread: true } })).thread.key;
      keys.push(key);
      await fileKnown(key);
      await approve(key);
      await writtenBack(file);
      await expectSameFlagsEverywhere(key, packet, file);
    } finally {
      delete process.env.BATON_URL;
      delete process.env.BATON_TOKEN;
      await bench.remove();
    }
  });
});

describe("reports sent with a packet over HTTP", () => {
  it("are read when no workspace holds them, redacted, and must be the packet's own pointers", async () => {
    const dir = await mkdtemp(path.join(base, "envelope-"));
    const { packet } = await workspace(dir, "T-envelope");
    const secret = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
    const report = { ...FAILING_REPORT, findings: [{ severity: "high", detail: `token ${secret} leaked in the log` }] };

    const wrongRef = await post({ packet, reports: [{ ref: "outputs/other.json", report }] });
    expect(wrongRef.status).toBe(400);
    expect(wrongRef.json.error).toMatchObject({ code: "invalid_request", details: { field: "reports.0.ref" } });

    const stored = await post({ packet, reports: [{ ref: "outputs/verification/T-envelope.json", report }] });
    expect(stored.status).toBe(201);
    expect(codes(stored.json.flags as Flag[])).toContain("verdict_failed");
    const row = await (await database()).packetReport.findFirstOrThrow({ where: { versionId: String(stored.json.packet_id) } });
    expect(row.json).not.toContain(secret);
    expect(row.json).toContain("[redacted:");
    keys.push(String(stored.json.thread_key));
  });

  it("sent again with a packet that arrived without them, are stored once and read at once", async () => {
    const { packet } = await workspace(await mkdtemp(path.join(base, "late-reports-")), "T-late");
    const bare = await post(packet);
    expect(codes(bare.json.flags as Flag[])).toContain("verdict_missing");
    const ref = "outputs/verification/T-late.json";
    const withReports = await post({ packet, reports: [{ ref, report: FAILING_REPORT }] });
    expect(withReports.status).toBe(200);
    expect(codes(withReports.json.flags as Flag[])).toContain("verdict_failed");
    // A second sending never replaces the stored report.
    await post({ packet, reports: [{ ref, report: { passed: true } }] });
    const id = String(bare.json.packet_id);
    expect((await (await database()).packetReport.findMany({ where: { versionId: id } })).map((row) => JSON.parse(row.json) as unknown)).toEqual([FAILING_REPORT]);
    const events = await (await database()).ledgerEvent.findMany({ where: { versionId: id, kind: "packet_reports_attached" } });
    expect(events.map((event) => JSON.parse(event.data) as unknown)).toEqual([{ reports: [ref] }]);
    keys.push(String(bare.json.thread_key));
  });

  it("over the size limit are refused, naming the report", async () => {
    const { packet } = await workspace(await mkdtemp(path.join(base, "large-")), "T-large");
    const large = { passed: true, findings: ["x".repeat(300 * 1024)] };
    const answer = await post({ packet, reports: [{ ref: "outputs/verification/T-large.json", report: large }] });
    expect(answer.status).toBe(413);
    expect(answer.json.error).toMatchObject({ code: "payload_too_large", details: { field: "reports.0.report" } });
  });
});
