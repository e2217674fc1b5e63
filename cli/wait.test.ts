import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import { GET as getBoard } from "../app/api/v1/board/route";
import { GET as getHandoff } from "../app/api/v1/threads/[key]/handoff/route";
import type { Person } from "../lib/auth/roles";
import { MAX_WAITS_PER_READER } from "../lib/auth/reader-checks";
import { createApiToken } from "../lib/auth/tokens";
import { createFirstAdmin } from "../lib/auth/users";
import { closeDatabase } from "../lib/db/client";
import { answer, decide } from "../lib/human/actions";
import { waitRegistryStatus } from "../lib/human/wait";
import { ingestPacket } from "../lib/ingest/ingest";
import { countStatements } from "@/testing/count-statements";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { scheduleWriteBack } from "../lib/human/writeback/write-human-section";
import { main } from "./main";
import { WAIT_EXIT, waitTuning } from "./sync/wait-for-action";

/**
 * `baton wait` against a real local server running the real routes
 * (GET /api/v1/threads/{key}/handoff, GET /api/v1/board) on a real database file.
 */
// 200 waiting reads at once with one token, on purpose: the per-token rate limit
// (decision 021) is off here; freshDatabaseForThisFile reads the environment again.
process.env.BATON_RATE_LIMIT_PER_MINUTE = "0";
freshDatabaseForThisFile();

let person: Person;
let readToken: string;
let writeOnlyToken: string;
let folder: string;

// ---- the local server: the real route handlers behind node:http, stoppable and restartable on one port

let server: Server | null = null;
let port = 0;
let url = "";

async function serve(incoming: IncomingMessage, outgoing: ServerResponse): Promise<void> {
  // The client went away before the answer: what Next.js tells a handler through request.signal.
  const gone = new AbortController();
  outgoing.on("close", () => {
    if (!outgoing.writableEnded) gone.abort();
  });
  const headers: [string, string][] = [];
  for (const [name, value] of Object.entries(incoming.headers)) if (value !== undefined) headers.push([name, String(value)]);
  const request = new Request(`${url}${incoming.url}`, { headers, signal: gone.signal });
  const pathname = new URL(request.url).pathname;
  const handoff = /^\/api\/v1\/threads\/([^/]+)\/handoff$/.exec(pathname);
  let response: Response;
  if (handoff) response = await getHandoff(request, { params: Promise.resolve({ key: decodeURIComponent(handoff[1]!) }) });
  else if (pathname === "/api/v1/board") response = await getBoard(request);
  else response = new Response(JSON.stringify({ error: { code: "not_found", message: "no such route", details: null } }), { status: 404 });
  const body = Buffer.from(await response.arrayBuffer());
  if (outgoing.destroyed) return;
  outgoing.writeHead(response.status, Object.fromEntries(response.headers));
  outgoing.end(body);
}

async function startServer(): Promise<void> {
  const started = createServer((incoming, outgoing) => void serve(incoming, outgoing));
  await new Promise<void>((resolve) => started.listen(port, "127.0.0.1", resolve));
  port = (started.address() as AddressInfo).port;
  url = `http://127.0.0.1:${port}`;
  server = started;
}

/** As when Baton stops: every connection cut, the database closed. */
async function stopServer(): Promise<void> {
  const stopping = server!;
  server = null;
  stopping.closeAllConnections();
  await new Promise((resolve) => stopping.close(resolve));
  await closeDatabase();
}

// ---- fixtures

beforeAll(async () => {
  const admin = await createFirstAdmin({ username: "mei", password: "a long enough password" });
  person = { id: admin.id, username: admin.username, role: admin.role };
  readToken = (await createApiToken("waiter", ["packets:read"])).token;
  writeOnlyToken = (await createApiToken("writer", ["packets:write"])).token;
  folder = mkdtempSync(path.join(tmpdir(), "baton-wait-"));
  await startServer();
});
afterAll(async () => {
  if (server) await stopServer();
  rmSync(folder, { recursive: true, force: true });
});

let serial = 0;
async function newThread(extra: Record<string, unknown> = {}): Promise<{ key: string; packetId: string }> {
  // Slashes, @, # and spaces must survive as one path segment.
  const key = `wait/acme@feat #${++serial}`;
  const stored = await ingestPacket({ thread: key, summary: "work", next_action: "deploy to staging", ...extra }, { kind: "http", actor: "test" });
  return { key, packetId: stored.packet_id };
}

let stdout: MockInstance<typeof process.stdout.write>;
let error: MockInstance<typeof console.error>;
const printed = () => stdout.mock.calls.map((call) => String(call[0])).join("");
const said = () => error.mock.calls.map((call) => call.map(String).join(" "));
const savedTuning = { ...waitTuning };
beforeEach(() => {
  stdout = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
  error = vi.spyOn(console, "error").mockImplementation(() => undefined);
});
afterEach(() => {
  vi.restoreAllMocks();
  Object.assign(waitTuning, savedTuning);
});

const wait = (key: string, ...args: string[]) => main(["wait", key, "--server", url, "--token", readToken, ...args]);

/** Resolves once `count` waiting requests are past their first read (only a wake or the timeout answers them now). */
async function waiting(count = 1): Promise<void> {
  await expect.poll(() => waitRegistryStatus().waiters, { timeout: 15_000 }).toBe(count);
  await new Promise((resolve) => setTimeout(resolve, 100));
}

/** A person's action, and its background write-back drained (the CLI closes the database when it ends). */
async function act(key: string, action: () => Promise<unknown>): Promise<number> {
  await action();
  const at = performance.now();
  await scheduleWriteBack([key]);
  return at;
}

describe("baton wait", () => {
  it("exits 0 soon after a person approves, printing the merged packet with the decision", async () => {
    const { key, packetId } = await newThread();
    const run = wait(key);
    await waiting();
    const acted = await act(key, () => decide(person, key, { kind: "approved", packet_id: packetId, base_revision: 0, note: "go" }));
    expect(await run).toBe(WAIT_EXIT.approved);
    console.log(`baton wait returned ${(performance.now() - acted).toFixed(0)} ms after the approval`);

    const packet = JSON.parse(printed()) as { summary: string; human: Record<string, unknown> };
    expect(printed().endsWith("}\n")).toBe(true);
    expect(packet.summary).toBe("work");
    expect(packet.human).toMatchObject({ revision: 1, decision: { kind: "approved", by: "mei", note: "go" } });
    expect(said().at(-1)).toMatch(new RegExp(`^baton wait: approved by mei at \\S+ \\(revision 1 of packet ${packetId}\\) on `));
    expect(waitRegistryStatus().waiters).toBe(0);
  });

  it("exits 10 when a person intervenes, writing the packet to -o atomically", async () => {
    const { key, packetId } = await newThread();
    const out = path.join(folder, "intervened.json");
    const run = wait(key, "-o", out);
    await waiting();
    await act(key, () => decide(person, key, { kind: "intervened", packet_id: packetId, base_revision: 0, question: "Why was the migration reverted?" }));
    expect(await run).toBe(WAIT_EXIT.intervened);
    expect(printed()).toBe("");
    const packet = JSON.parse(readFileSync(out, "utf8")) as { human: Record<string, unknown> };
    expect(packet.human).toMatchObject({ decision: { kind: "intervened" }, questions: [{ id: "h1", text: "Why was the migration reverted?", blocking: true }] });
    expect(readdirSync(folder)).toEqual(["intervened.json"]);
  });

  it("exits 11 with --for answers; --for decision lets answers pass and waits for the decision", async () => {
    const { key, packetId } = await newThread({ questions_for_human: ["Which region first?", "Keep the flag?"] });
    const answers = wait(key, "--for", "answers");
    const decision = main(["wait", key, "--server", url, "--token", readToken, "--for", "decision", "-o", path.join(folder, "decision.json")]);
    await waiting(2);
    await act(key, () => answer(person, key, { packet_id: packetId, base_revision: 0, answers: [{ question_id: "q0", answer: "eu-west" }] }));
    expect(await answers).toBe(WAIT_EXIT.answered);
    const packet = JSON.parse(printed()) as { human: { answers: { question_id: string; answer: string }[] } };
    expect(packet.human.answers).toEqual([expect.objectContaining({ question_id: "q0", answer: "eu-west", by: "mei" })]);
    expect(said()).toContainEqual(expect.stringMatching(/^baton wait: answered by mei: 1 answer \(revision 1 of packet /));

    // The other one resumed from revision 1 and still waits.
    await waiting(1);
    await act(key, () => decide(person, key, { kind: "approved", packet_id: packetId, base_revision: 1 }));
    expect(await decision).toBe(WAIT_EXIT.approved);
    expect(JSON.parse(readFileSync(path.join(folder, "decision.json"), "utf8")).human).toMatchObject({ revision: 2, decision: { kind: "approved" } });
  });

  it("exits 2 when nobody acts within --timeout, writing nothing", async () => {
    const { key } = await newThread();
    const out = path.join(folder, "never.json");
    const started = performance.now();
    // A real timeout over a real waiting request: short, but long enough to need the server's wait.
    expect(await wait(key, "--timeout", "500ms", "-o", out)).toBe(WAIT_EXIT.timedOut);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(elapsed).toBeLessThan(4_000);
    expect(printed()).toBe("");
    expect(readdirSync(folder)).not.toContain("never.json");
    expect(said().at(-1)).toBe("baton wait: timed out after 500ms (still at revision 0)");
  });

  it("with --after counts what happened since that revision, even before it started", async () => {
    const { key, packetId } = await newThread();
    await act(key, () => decide(person, key, { kind: "approved", packet_id: packetId, base_revision: 0 }));
    expect(await wait(key, "--after", "0", "--timeout", "5s")).toBe(WAIT_EXIT.approved);
    // Without it, only the NEXT action counts.
    expect(await wait(key, "--timeout", "500ms")).toBe(WAIT_EXIT.timedOut);
  });

  it("waits on a newer packet that replaces the one it started on", async () => {
    const { key } = await newThread();
    const run = wait(key);
    await waiting();
    const newer = await ingestPacket({ thread: key, summary: "the next session", next_action: "merge" }, { kind: "http", actor: "test" });
    await waiting();
    await act(key, () => decide(person, key, { kind: "approved", packet_id: newer.packet_id, base_revision: 0 }));
    expect(await run).toBe(WAIT_EXIT.approved);
    expect(JSON.parse(printed())).toMatchObject({ summary: "the next session", human: { revision: 1 } });
    expect(said()).toContainEqual(`baton wait: a newer packet (${newer.packet_id}) is now active on ${key}; waiting on it`);
  });

  it("survives Baton restarting while it waits, and receives the decision made after", async () => {
    waitTuning.retryDelaysMs = [100, 200, 400];
    const { key, packetId } = await newThread();
    const run = wait(key, "--timeout", "60s");
    await waiting();

    await stopServer();
    try {
      // The server's side of the wait is gone with it.
      await expect.poll(() => waitRegistryStatus().waiters).toBe(0);
      // The CLI has found Baton gone and is retrying.
      await expect.poll(() => said()).toContainEqual(expect.stringMatching(/cannot reach .*; retrying until the timeout$/));
    } finally {
      await startServer();
    }
    await waiting();
    await act(key, () => decide(person, key, { kind: "approved", packet_id: packetId, base_revision: 0 }));

    expect(await run).toBe(WAIT_EXIT.approved);
    expect(JSON.parse(printed()).human).toMatchObject({ revision: 1, decision: { kind: "approved" } });
    const lines = said();
    expect(lines).toContainEqual(expect.stringMatching(/^baton wait: cannot reach http:\/\/127\.0\.0\.1:\d+: .*; retrying until the timeout$/));
    expect(lines).toContainEqual(`baton wait: reconnected to ${url}`);
  });

  it("resumes from the last revision it saw: an action taken while Baton was down is received on reconnecting", async () => {
    waitTuning.retryDelaysMs = [100, 200, 400];
    const { key, packetId } = await newThread({ questions_for_human: ["Which region first?"] });
    const run = wait(key, "--for", "any", "--timeout", "60s");
    await waiting();
    await stopServer();
    try {
      // Written by another Baton process, say, while this one is down.
      await act(key, () => answer(person, key, { packet_id: packetId, base_revision: 0, answers: [{ question_id: "q0", answer: "eu-west" }] }));
      // The CLI has found Baton gone (so the answer reaches it on reconnecting, not on the wait it started).
      await expect.poll(() => said()).toContainEqual(expect.stringMatching(/cannot reach .*; retrying until the timeout$/));
    } finally {
      await startServer();
    }
    expect(await run).toBe(WAIT_EXIT.answered);
    expect(JSON.parse(printed()).human.answers).toEqual([expect.objectContaining({ answer: "eu-west" })]);
  });

  it("exits 1 for an unknown thread, a token without packets:read, and bad options, without waiting", async () => {
    expect(await wait("no/such@thread", "--timeout", "1m")).toBe(WAIT_EXIT.error);
    expect(said().at(-1)).toBe('baton wait: failed: HTTP 404: Thread "no/such@thread" was not found.');

    const { key } = await newThread();
    expect(await main(["wait", key, "--server", url, "--token", writeOnlyToken, "--timeout", "1m"])).toBe(WAIT_EXIT.error);
    expect(said().at(-1)).toBe('baton wait: failed: HTTP 403: This token lacks the scope "packets:read"; create one that has it.');

    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    expect(await wait(key, "--for", "lunch")).toBe(WAIT_EXIT.error);
    expect(await wait(key, "--timeout", "soon")).toBe(WAIT_EXIT.error);
    expect(await wait(key, "--after", "-1")).toBe(WAIT_EXIT.error);
    const usage = stderr.mock.calls.map((call) => String(call[0])).join("");
    expect(usage).toContain("Allowed choices are decision, answers, any");
    expect(usage).toContain("give a duration such as 90s, 30m or 2h");
    expect(printed()).toBe("");
  });

  it("documents its exit codes in --help", async () => {
    expect(await main(["wait", "--help"])).toBe(0);
    const help = printed();
    expect(help).toContain("Usage: baton wait [options] <thread>");
    for (const text of ["--for <what>", "--timeout <duration>", "(default: 30m)", "--after <revision>", "-o, --output <file>", "--server <url>", "--token <token>"]) {
      expect(help).toContain(text);
    }
    expect(help).toMatch(/ {3}0 {2}approved/);
    expect(help).toMatch(/10 {2}intervened/);
    expect(help).toMatch(/11 {2}answered/);
    expect(help).toMatch(/ {3}2 {2}timed out/);
    expect(help).toMatch(/ {3}1 {2}error/);
  });
});

describe("GET /api/v1/threads/{key}/handoff?wait&after", () => {
  const endpoint = (key: string, query = "") => `${url}/api/v1/threads/${encodeURIComponent(key)}/handoff${query}`;
  const authorization = () => ({ authorization: `Bearer ${readToken}` });

  it("answers 304 with the current ETag and revision when the wait ends with nothing new", async () => {
    const { key, packetId } = await newThread();
    const plain = await fetch(endpoint(key), { headers: authorization() });
    expect(plain.status).toBe(200);
    expect(plain.headers.get("baton-human-revision")).toBe("0");
    expect(plain.headers.get("baton-packet-id")).toBe(packetId);
    await plain.arrayBuffer();

    const started = performance.now();
    const timedOut = await fetch(endpoint(key, "?wait=0.5&after=0"), { headers: authorization() });
    expect(performance.now() - started).toBeGreaterThanOrEqual(450);
    expect(timedOut.status).toBe(304);
    expect(await timedOut.text()).toBe("");
    expect(timedOut.headers.get("etag")).toBe(plain.headers.get("etag"));
    expect(timedOut.headers.get("baton-human-revision")).toBe("0");
    expect(timedOut.headers.get("baton-packet-id")).toBe(packetId);
  });

  it("answers 200 at once when the revision is past `after`, or the active packet is another than `after_packet`", async () => {
    const { key, packetId } = await newThread();
    await act(key, () => decide(person, key, { kind: "approved", packet_id: packetId, base_revision: 0 }));
    const passed = await fetch(endpoint(key, "?wait=30&after=0"), { headers: authorization() });
    expect(passed.status).toBe(200);
    expect(passed.headers.get("baton-human-revision")).toBe("1");
    expect(((await passed.json()) as { human: { revision: number } }).human.revision).toBe(1);

    const moved = await fetch(endpoint(key, `?wait=30&after=1&after_packet=pv_an_older_one`), { headers: authorization() });
    expect(moved.status).toBe(200);
    expect(moved.headers.get("baton-packet-id")).toBe(packetId);
    await moved.arrayBuffer();
    // Without wait it compares only.
    expect((await fetch(endpoint(key, `?after=1&after_packet=${packetId}`), { headers: authorization() })).status).toBe(304);
  });

  it("refuses a wait beyond 300 seconds, and wait or after_packet without after, naming the field", async () => {
    const { key } = await newThread();
    const cases: [string, string][] = [
      ["?wait=301&after=0", "Bad query: wait: must be at most 300 seconds; ask again to wait longer."],
      ["?wait=soon&after=0", "Bad query: wait: must be a number of seconds, 0 to 300."],
      ["?wait=5", "Bad query: after: is required with wait or after_packet: the human revision you last saw (0 for a new packet)."],
      ["?wait=5&after=-1", "Bad query: after: must be a human-section revision: a whole number, 0 or more."],
    ];
    for (const [query, message] of cases) {
      const refused = await fetch(endpoint(key, query), { headers: authorization() });
      expect(refused.status, query).toBe(400);
      expect(((await refused.json()) as { error: { message: string } }).error.message).toBe(message);
    }
    expect((await fetch(endpoint(key, "?wait=5&after=0"))).status).toBe(401);
    expect(waitRegistryStatus().waiters).toBe(0);
  });

  it("200 concurrent waiting requests leave the board answering promptly, and cost the database no query per waiter", async () => {
    const { key, packetId } = await newThread();
    // One token may hold MAX_WAITS_PER_READER waits (lib/auth/reader-checks.ts): the 200 come from a fleet's tokens.
    const fleet = await Promise.all(
      Array.from({ length: Math.ceil(200 / MAX_WAITS_PER_READER) }, async (_, index) => (await createApiToken(`fleet-${index}`, ["packets:read"])).token),
    );
    const controller = new AbortController();
    const requests = Array.from({ length: 200 }, (_, index) =>
      fetch(endpoint(key, `?wait=120&after=0&after_packet=${packetId}`), {
        headers: { authorization: `Bearer ${fleet[index % fleet.length]}` },
        signal: controller.signal,
      }).then(async (response) => ({
        status: response.status,
        revision: response.headers.get("baton-human-revision"),
        body: await response.text(),
      })),
    );
    try {
      await waiting(200);

      const counter = countStatements();
      let quiet: number;
      try {
        // Real time on purpose: it shows that nothing runs per waiter on any timer; 2 s holds one re-check of the tokens.
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        quiet = counter.count();
      } finally {
        counter.stop();
      }
      console.log(`statements while 200 requests waited 2 s: ${quiet}`);
      // The ledger feed's one MAX(seq) a second, and one look-up of the fleet's tokens every 2 s; nothing per waiter.
      expect(quiet).toBeLessThanOrEqual(4);

      const timings: number[] = [];
      for (let sample = 0; sample < 5; sample++) {
        const started = performance.now();
        const board = await fetch(`${url}/api/v1/board`, { headers: authorization() });
        expect(board.status).toBe(200);
        await board.arrayBuffer();
        timings.push(performance.now() - started);
      }
      console.log(`GET /api/v1/board while 200 requests wait: ${timings.map((ms) => ms.toFixed(0)).join(", ")} ms`);
      expect(Math.max(...timings)).toBeLessThan(2_000);
      expect(waitRegistryStatus().waiters).toBe(200);

      const readsBefore = waitRegistryStatus().wakeReads;
      const acted = await act(key, () => decide(person, key, { kind: "approved", packet_id: packetId, base_revision: 0 }));
      const answers = await Promise.all(requests);
      console.log(`all 200 waiting requests answered ${(performance.now() - acted).toFixed(0)} ms after the approval`);
      expect(answers.every((answer) => answer.status === 200 && answer.revision === "1")).toBe(true);
      expect(new Set(answers.map((answer) => answer.body)).size).toBe(1);
      expect(waitRegistryStatus().wakeReads - readsBefore).toBe(1);
    } finally {
      controller.abort();
      await Promise.allSettled(requests);
    }
  }, 60_000);
});
