import { execFile } from "node:child_process";
import { copyFile, mkdir, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { createToken, expect, test } from "./support/fixtures";
import { EXAMPLES_DIR } from "./support/paths";
import { getJson, packetFor, uniqueId, type PacketDto } from "./support/api";

/** `baton push` against the running server, spawned as a user would run it. */

const run = promisify(execFile);
const PACKETS_DIR = path.join(EXAMPLES_DIR, "packets");
const INVALID_DIR = path.join(EXAMPLES_DIR, "invalid");

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  lines: string[];
}

async function batonPush(baseURL: string, token: string | undefined, paths: string[]): Promise<CliRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, BATON_URL: baseURL };
  if (token === undefined) delete env.BATON_TOKEN;
  else env.BATON_TOKEN = token;
  try {
    const { stdout, stderr } = await run("node", ["bin/baton.js", "push", ...paths], { env, encoding: "utf8", timeout: 60_000 });
    return { code: 0, stdout, stderr, lines: stdout.split("\n").filter(Boolean) };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof failed.code !== "number") throw error;
    const stdout = failed.stdout ?? "";
    return { code: failed.code, stdout, stderr: failed.stderr ?? "", lines: stdout.split("\n").filter(Boolean) };
  }
}

interface PushLine {
  file: string;
  outcome: "stored" | "duplicate";
  packetId: string;
  thread: string;
  flags: string[];
}

/** `<file>: stored|duplicate <packet_id> thread=<key>[ flags=a,b] flags_at=<time>[ reports=n]`; thread keys may hold spaces. */
function parsePushLine(line: string): PushLine {
  const match = /^(.+?): (stored|duplicate) (pv_\w+) thread=(.+?)(?: flags=([\w,]+))? flags_at=\S+(?: reports=\d+)?$/.exec(line);
  expect(match, line).not.toBeNull();
  const [, file, outcome, packetId, thread, flags] = match!;
  return { file: file!, outcome: outcome as PushLine["outcome"], packetId: packetId!, thread: thread!, flags: flags ? flags.split(",") : [] };
}

test("pushing the examples folder prints one line per file and exits 0; pushing again reports duplicates", async ({
  baseURL,
  agentToken,
}) => {
  const files = (await readdir(PACKETS_DIR)).filter((name) => name.endsWith(".json")).sort((a, b) => a.localeCompare(b));
  expect(files.length).toBeGreaterThanOrEqual(7);

  const first = await batonPush(baseURL!, agentToken, [PACKETS_DIR]);
  expect(first.code, first.stdout + first.stderr).toBe(0);
  expect(first.lines).toHaveLength(files.length);
  const pushed = first.lines.map(parsePushLine);
  expect(pushed.map((line) => line.file)).toEqual(files.map((name) => path.join(PACKETS_DIR, name)));
  // Another run (or spec) may have pushed these same files already: stored or duplicate, never failed.
  for (const line of pushed) expect(["stored", "duplicate"]).toContain(line.outcome);

  const lesson = pushed.find((line) => line.file.endsWith("lesson-shape.json"))!;
  expect(lesson.thread).toBe("task:T-014");
  const full = pushed.find((line) => line.file.endsWith("full-v1.json"))!;
  expect(full.thread).toBe("acme/payments@feat/refund-webhooks#refund webhooks");
  expect(full.flags).toEqual(["open_questions"]);
  const sentinel = pushed.find((line) => line.file.endsWith("sentinel-next-action.json"))!;
  expect(sentinel.flags).toContain("missing_next_action");

  const again = await batonPush(baseURL!, agentToken, [PACKETS_DIR]);
  expect(again.code, again.stdout + again.stderr).toBe(0);
  const repeated = again.lines.map(parsePushLine);
  expect(repeated.map((line) => [line.file, line.outcome, line.packetId])).toEqual(
    pushed.map((line) => [line.file, "duplicate", line.packetId]),
  );
});

test("a folder with an invalid file: the other files are stored, that file's line names the error, exit non-zero", async ({
  baseURL,
  request,
  agentToken,
}, testInfo) => {
  const folder = testInfo.outputPath("mixed");
  await mkdir(folder, { recursive: true });
  const threadA = uniqueId("cli-a");
  const threadB = uniqueId("cli-b");
  await writeFile(path.join(folder, "a-valid.json"), JSON.stringify(packetFor(threadA)));
  await copyFile(path.join(INVALID_DIR, "wrong-types.json"), path.join(folder, "b-wrong-types.json"));
  await copyFile(path.join(INVALID_DIR, "truncated.json"), path.join(folder, "c-truncated.json"));
  await writeFile(path.join(folder, "d-valid.json"), JSON.stringify(packetFor(threadB)));

  const result = await batonPush(baseURL!, agentToken, [folder]);
  expect(result.code, result.stdout + result.stderr).not.toBe(0);
  expect(result.lines).toHaveLength(4);
  const [a, wrongTypes, truncated, d] = result.lines as [string, string, string, string];

  const storedA = parsePushLine(a);
  expect(storedA).toMatchObject({ file: path.join(folder, "a-valid.json"), outcome: "stored", thread: threadA });
  expect(parsePushLine(d)).toMatchObject({ file: path.join(folder, "d-valid.json"), outcome: "stored", thread: threadB });

  expect(wrongTypes).toMatch(new RegExp(`^${escapeRegExp(path.join(folder, "b-wrong-types.json"))}: failed \\(HTTP 400\\): `));
  for (const field of ["summary", "next_action", "open_risks"]) expect(wrongTypes).toContain(field);
  expect(truncated).toMatch(new RegExp(`^${escapeRegExp(path.join(folder, "c-truncated.json"))}: failed \\(HTTP 400\\): `));
  expect(truncated).toContain("not valid JSON");

  // The CLI marks what it sends, so the ledger knows where a version came from.
  const packet = await getJson<PacketDto>(request, agentToken, `/api/v1/packets/${storedA.packetId}`);
  expect(packet.source).toBe("cli");
  expect(packet.received).toEqual(packetFor(threadA));
});

test("a folder holding handoff.json files sends only those", async ({ baseURL, agentToken }, testInfo) => {
  const workspace = testInfo.outputPath("workspace");
  const sessions = [uniqueId("sess-1"), uniqueId("sess-2")];
  for (const session of sessions) {
    const folder = path.join(workspace, "outputs", "handoff", session);
    await mkdir(folder, { recursive: true });
    await writeFile(path.join(folder, "handoff.json"), JSON.stringify(packetFor(uniqueId("cli-handoff"), { session_id: session })));
  }
  await mkdir(path.join(workspace, "outputs", "verification"), { recursive: true });
  await writeFile(path.join(workspace, "outputs", "verification", "T-1.json"), JSON.stringify({ task_id: "T-1", passed: true }));

  const result = await batonPush(baseURL!, agentToken, [workspace]);
  expect(result.code, result.stdout + result.stderr).toBe(0);
  expect(result.lines.map((line) => parsePushLine(line).file).sort()).toEqual(
    sessions.map((session) => path.join(workspace, "outputs", "handoff", session, "handoff.json")).sort(),
  );
});

test("push fails with a clear message without a token, and line by line with a token that cannot write", async ({ baseURL }, testInfo) => {
  const file = testInfo.outputPath("packet.json");
  await writeFile(file, JSON.stringify(packetFor(uniqueId("cli-denied"))));

  const noToken = await batonPush(baseURL!, undefined, [file]);
  expect(noToken.code).not.toBe(0);
  expect(noToken.stderr).toContain("BATON_TOKEN");

  const readOnly = await createToken(uniqueId("cli-read-only"), ["packets:read"]);
  const denied = await batonPush(baseURL!, readOnly, [file]);
  expect(denied.code).not.toBe(0);
  expect(denied.lines).toEqual([expect.stringMatching(new RegExp(`^${escapeRegExp(file)}: failed \\(HTTP 403\\): .*packets:write`))]);
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
