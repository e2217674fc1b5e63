import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as board from "@/app/api/v1/board/route";
import * as packetMarkdown from "@/app/api/v1/packets/[id]/markdown/route";
import * as packetById from "@/app/api/v1/packets/[id]/route";
import * as questions from "@/app/api/v1/questions/route";
import * as risks from "@/app/api/v1/risks/route";
import * as stream from "@/app/api/v1/stream/route";
import * as threadEvents from "@/app/api/v1/threads/[key]/events/route";
import * as threadHandoff from "@/app/api/v1/threads/[key]/handoff/route";
import * as threadById from "@/app/api/v1/threads/[key]/route";
import * as timeline from "@/app/api/v1/timeline/route";
import * as handoffMd from "@/app/threads/[key]/handoff.md/route";
import type { Person } from "../../lib/auth/roles";
import { createApiToken } from "../../lib/auth/tokens";
import { createFirstAdmin } from "../../lib/auth/users";
import { loadBoard } from "../../lib/board/board";
import { resetConfig } from "../../lib/server/config";
import { database } from "../../lib/db/client";
import { decide } from "../../lib/human/actions";
import { listOpenQuestions } from "../../lib/views/questions/inbox";
import { listThreadEvents } from "../../lib/events/queries";
import { fakeChars, fakeSecrets, type FakeSecret } from "@/testing/fake-secrets";
import { listRisks } from "../../lib/views/risks/queries";
import { testsRunOnPostgresql } from "@/testing/postgresql";
import { recordAttempts, recordFigure } from "@/testing/reliability";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { makeTempWorkspace, type TempWorkspace } from "@/testing/temp-workspace";
import { readVerdictCached } from "../../lib/views/verdict/cache";
import { workspaceRootsFor } from "../../lib/views/verdict/roots";
import { allowWebhookTargetsForThisFile } from "@/testing/webhook-targets";
import { getPacket, getThreadDetail } from "../../lib/views/threads/queries";
import { threadFiltersSchema } from "../../lib/views/threads/filters";
import { deliverStep } from "../../lib/notify/deliver";
import { NOTIFICATION_EVENTS } from "../../lib/notify/events";
import { notifyUntilIdle } from "../../lib/notify/notifier";
import { startTestReceiver, type TestReceiver } from "@/testing/webhook-receiver";
import { newWebhookSchema } from "../../lib/notify/dto";
import { createWebhook } from "../../lib/notify/webhooks";
import { answer, createWriteToken, packetRequest } from "@/testing/hardening/ingest-harness";

/**
 * The redaction corpus (docs/decisions/035-redaction-corpus-and-rule-set.md): every
 * fake secret of testing/fake-secrets.ts, two seeds, placed where an agent can put
 * text (string values, object keys, report files, thread keys, agent names, session
 * ids, session event notes), sent through the real ingest; then every output is
 * searched for every secret: the API (packet, thread, handoff, board, risks,
 * questions, timeline, stream), the thread page's data, the markdown exports, the
 * webhook bodies a local receiver got, and every row of every table. Each corpus
 * kind is one row of docs/reliability.md: placed, outputs searched, leaks (must be 0).
 */

const temp = freshDatabaseForThisFile();
allowWebhookTargetsForThisFile("127.0.0.1");
const SECTION = "redaction-corpus";
const ORIGIN = "http://baton.test";
const PROJECT = "corpus";

const CORPUS: FakeSecret[] = [...fakeSecrets(21), ...fakeSecrets(22)];
const LABELS = [...new Set(CORPUS.map((item) => item.label))];
/** Identity fields refuse control characters (lib/contract/validate.ts): only one-line texts go there. */
const ONE_LINE = CORPUS.filter((item) => !/[\u0000-\u001f]/.test(item.text));

/** Where each corpus item was placed, by label. */
const placed = new Map<string, Set<string>>();
const place = (item: FakeSecret, where: string) => {
  const set = placed.get(item.label) ?? new Set();
  set.add(where);
  placed.set(item.label, set);
};
/** Leaks found, by label, and the outputs searched. */
const leaks = new Map<string, string[]>();
const outputs: string[] = [];

/** The secret as it would appear raw, in a URL or in HTML. */
const forms = (secret: string) => [...new Set([secret, encodeURIComponent(secret), secret.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")])];
/** Each item's forms, made once: every output is searched for all of them. */
const SEARCHED = CORPUS.map((item) => ({ item, forms: forms(item.secret) }));

function search(output: string, text: string): string[] {
  outputs.push(output);
  const found: string[] = [];
  for (const { item, forms } of SEARCHED) {
    if (!forms.some((form) => text.includes(form))) continue;
    found.push(`${item.label} in ${output}`);
    leaks.set(item.label, [...(leaks.get(item.label) ?? []), output]);
  }
  return found;
}

type Handler = (request: Request, segment: { params: Promise<never> }) => Promise<Response>;
async function get(handler: Handler, url: string, token: string, params: Record<string, string> = {}): Promise<string> {
  const response = await handler(new Request(`${ORIGIN}${url}`, { headers: { authorization: `Bearer ${token}` } }), { params: Promise.resolve(params) as Promise<never> });
  const text = await response.text();
  expect(response.status, `${url}: ${text.slice(0, 300)}`).toBe(200);
  return text;
}

/** The stream from the start of the ledger, read until it says it is caught up (bounded by time). */
async function readStream(token: string): Promise<string> {
  const response = await stream.GET(new Request(`${ORIGIN}/api/v1/stream?after=0`, { headers: { authorization: `Bearer ${token}` } }));
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && !text.includes("event: ready")) {
    const chunk = await Promise.race([reader.read(), new Promise<null>((resolve) => setTimeout(() => resolve(null), 2_000))]);
    if (!chunk || chunk.done) break;
    text += decoder.decode(chunk.value, { stream: true });
  }
  await reader.cancel();
  return text;
}

/** Every row of every Baton table, as JSON (on PostgreSQL as the server renders it: no column type is left out). */
async function everyRow(): Promise<[string, string][]> {
  const db = await database();
  const postgresql = testsRunOnPostgresql();
  const tables = postgresql
    ? (await db.$queryRawUnsafe<{ name: string }[]>(`SELECT tablename::text AS name FROM pg_tables WHERE schemaname = current_schema()`)).map((row) => row.name)
    : (await db.$queryRawUnsafe<{ name: string }[]>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)).map((row) => row.name);
  expect(tables.length).toBeGreaterThan(5);
  const out: [string, string][] = [];
  for (const table of tables) {
    const quoted = `"${table.replace(/"/g, '""')}"`;
    const rows = postgresql
      ? await db.$queryRawUnsafe<unknown[]>(`SELECT row_to_json(t)::text AS row FROM ${quoted} t`)
      : await db.$queryRawUnsafe<unknown[]>(`SELECT * FROM ${quoted}`);
    out.push([table, JSON.stringify(rows, (_key, value: unknown) => (typeof value === "bigint" ? String(value) : value instanceof Uint8Array ? Buffer.from(value).toString("latin1") : value))]);
  }
  return out;
}

let writeToken = "";
let readToken = "";
let eventsToken = "";
let person: Person;
let ws: TempWorkspace;
let receiver: TestReceiver;
const saved = { roots: process.env.BATON_WORKSPACE_ROOTS, rate: process.env.BATON_RATE_LIMIT_PER_MINUTE };
const threadKeys: string[] = [];
const packetIds: string[] = [];

beforeAll(async () => {
  writeToken = await createWriteToken("corpus-writer");
  readToken = (await createApiToken("corpus-reader", ["packets:read"])).token;
  eventsToken = (await createApiToken("corpus-agent", ["events:write"])).token;
  const admin = await createFirstAdmin({ username: "corpus-admin", password: fakeChars(20, 9) });
  person = { id: admin.id, username: admin.username, role: admin.role };
  ws = await makeTempWorkspace();
  process.env.BATON_WORKSPACE_ROOTS = `${PROJECT}=${ws.root}`;
  // Hundreds of requests from one token: the rate limit is testing/hardening/rate-limit.test.ts's subject, not this file's.
  process.env.BATON_RATE_LIMIT_PER_MINUTE = "0";
  resetConfig();
  receiver = await startTestReceiver();
  for (const format of ["generic", "slack"] as const) {
    await createWebhook("corpus-admin", newWebhookSchema.parse({ name: `corpus-${format}`, url: receiver.url, format, events: [...NOTIFICATION_EVENTS], secret: fakeChars(24, 10) }));
  }
});

afterAll(async () => {
  await receiver?.close();
  await ws?.remove();
  for (const [name, value] of [["BATON_WORKSPACE_ROOTS", saved.roots], ["BATON_RATE_LIMIT_PER_MINUTE", saved.rate]] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  resetConfig();
  if (!outputs.length) return;
  const searched = new Set(outputs).size;
  let total = 0;
  for (const label of LABELS) {
    const items = CORPUS.filter((item) => item.label === label);
    const where = [...(placed.get(label) ?? [])].sort();
    total += items.length * where.length;
    const note = `${items.length} secrets x ${where.length} placements (${where.join(", ")}), each output searched; redacted as [redacted:${items[0]!.kind}]`;
    recordAttempts(SECTION, `secret: ${label}`, items.length * where.length, leaks.get(label)?.length ?? 0, note);
  }
  recordFigure(SECTION, "corpus", `${CORPUS.length} secrets, ${LABELS.length} kinds`, `fake secrets made at run time (testing/fake-secrets.ts, seeds 21 and 22); ${total} placements; ${searched} outputs searched, each for every secret raw, URL-encoded and HTML-escaped`);
});

/** A packet holding every corpus text in string values, keys and a report file; its risks are critical, so webhooks fire. */
function corpusPacket(thread: string, reportPaths: string[]): Record<string, unknown> {
  const texts = CORPUS.map((item) => item.text);
  for (const item of CORPUS) for (const where of ["string values", "object keys", "report files"]) place(item, where);
  return {
    thread,
    project: PROJECT,
    summary: `Deployed with ${texts[0]} and ${texts[1]}`,
    changed_files: CORPUS.map((_item, i) => ({ path: `config/env-${i}.txt`, change: "modified", note: texts[i] })),
    commands_run: texts.map((text, i) => (i % 2 ? { command: ["sh", "-c", text], exit_code: 0 } : text)),
    failed_attempts: texts.slice(0, 20).map((text) => ({ attempt: text, reason: "rotated" })),
    open_risks: texts.map((text, i) => ({ severity: i % 3 ? "high" : "critical", detail: `credentials committed: ${text}`, mitigation: text })),
    next_action: { action: `rotate ${texts[2]}`, command: texts[3] },
    questions_for_human: texts.slice(0, 40).map((text, i) => ({ id: `q-${i}`, question: `May I rotate ${text}?`, context: text, options: [text, "no"] })),
    verdict_pointer: reportPaths,
    x_env: Object.fromEntries(texts.map((text, i) => [text, `value ${i}`])),
    x_nested: { tokens: Object.fromEntries(texts.map((text, i) => [`k${i}`, { [text]: [text] }])) },
  };
}

/**
 * Which threads' exports (handoff, handoff.md, packet, packet markdown) are read; every
 * thread's own page (GET /api/v1/threads/:key: its hostile key looked up, its card and
 * versions shown) is read on both databases. On SQLite every thread's exports; on PostgreSQL those of
 * the values thread and of one one-line thread per seed: the exports render the redacted
 * strings the rows hold with the same code on either database, and every row of every
 * table is searched on both (docs/decisions/077-redaction-corpus-on-postgresql.md).
 */
const ONE_LINE_EXPORTS_READ_ON_POSTGRESQL = new Set([ONE_LINE[0], ONE_LINE.find((item) => CORPUS.indexOf(item) >= CORPUS.length / 2)]);
function exportsReadFor(threadIndex: number): boolean {
  if (!testsRunOnPostgresql() || threadIndex === 0) return true;
  return ONE_LINE_EXPORTS_READ_ON_POSTGRESQL.has(ONE_LINE[threadIndex - 1]);
}

describe("the redaction corpus through every output", () => {
  it("ingests the corpus in values, keys, report files, thread keys, agent names, session ids and notes", async () => {
    // Report files: a verification's findings and a review's notes, each holding every text.
    const verification = { task_id: "T-1", passed: false, findings: CORPUS.map((item) => ({ severity: "high", code: "leak", detail: item.text })) };
    const review = { task_id: "T-1", total: 4, verdict: "reject", dimensions: CORPUS.slice(0, 60).map((item, i) => ({ name: `d${i}`, score: 1, note: item.text })) };
    await ws.write("ws/outputs/verification/T-1.json", JSON.stringify(verification));
    await ws.write("ws/outputs/review/T-1.json", JSON.stringify(review));
    const pointers = ["outputs/verification/T-1.json", "outputs/review/T-1.json"];

    const sent = await answer(packetRequest(writeToken, JSON.stringify(corpusPacket("corpus/values", pointers))));
    expect(sent.status, JSON.stringify(sent.json).slice(0, 500)).toBe(201);
    const first = sent.json as { packet_id: string; thread_key: string };
    packetIds.push(first.packet_id);
    threadKeys.push(first.thread_key);

    // One thread per one-line text: the text is the thread key and the agent's name. Sent side
    // by side, as agents would: the writer stores them in a few shared commits, not one each.
    const answers = await Promise.all(
      ONE_LINE.map((item, i) => {
        place(item, "thread keys");
        place(item, "agent names");
        const packet = { thread: `corpus/${i} ${item.text}`, agent: { name: item.text, kind: "cli" }, summary: `thread ${i}`, next_action: "continue", open_risks: [{ severity: "critical", detail: `leak ${i}` }] };
        return answer(packetRequest(writeToken, JSON.stringify(packet)));
      }),
    );
    for (const [i, one] of answers.entries()) {
      expect(one.status, `${ONE_LINE[i]!.label}: ${JSON.stringify(one.json).slice(0, 300)}`).toBe(201);
      const stored = one.json as { packet_id: string; thread_key: string };
      packetIds.push(stored.packet_id);
      threadKeys.push(stored.thread_key);
    }

    // Session events: the id and the note (one-line ids; notes of any text).
    for (const [i, item] of CORPUS.entries()) {
      const key = threadKeys[1 + (i % ONE_LINE.length)]!;
      place(item, "session event notes");
      // Session ids are one line of at most 200 characters (lib/board/watchdog/session-events.ts).
      const oneLine = !/[\u0000-\u001f]/.test(item.text) && item.text.length <= 200;
      if (oneLine) place(item, "session ids");
      const body = { kind: i % 2 ? "session_started" : "session_ended", session_id: oneLine ? item.text : `s-${i}`, note: item.text };
      const request = new Request(`${ORIGIN}/api/v1/threads/${encodeURIComponent(key)}/events`, {
        method: "POST",
        headers: { authorization: `Bearer ${eventsToken}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const response = await threadEvents.POST(request, { params: Promise.resolve({ key }) });
      const text = await response.text();
      expect(response.status, `${item.label}: ${text.slice(0, 300)}`).toBe(200);
      expect(search("session event answer", text), item.label).toEqual([]);
    }

    const decided = await decide(person, first.thread_key, { kind: "approved", packet_id: first.packet_id, base_revision: 0, note: "rotate first" });
    expect(decided.human.revision).toBe(1);
  }, 120_000); // 159 packets and 168 session events over the routes: 8 s alone on PostgreSQL, 30 s and more in CI beside the other passes

  it("no output carries any secret", async () => {
    const found: string[] = [];
    const check = (output: string, text: string) => found.push(...search(output, text));
    const [key] = threadKeys;

    // The API.
    check("GET /api/v1/board", await get(board.GET as Handler, "/api/v1/board", readToken));
    check("GET /api/v1/risks", await get(risks.GET as Handler, "/api/v1/risks", readToken));
    check("GET /api/v1/questions", await get(questions.GET as Handler, "/api/v1/questions", readToken));
    check("GET /api/v1/timeline", await get(timeline.GET as Handler, "/api/v1/timeline", readToken));
    check("GET /api/v1/stream", await readStream(readToken));
    for (const [i, thread] of threadKeys.entries()) {
      const encoded = encodeURIComponent(thread);
      check("GET /api/v1/threads/:key", await get(threadById.GET as Handler, `/api/v1/threads/${encoded}`, readToken, { key: thread }));
      if (!exportsReadFor(i)) continue;
      check("GET /api/v1/threads/:key/handoff", await get(threadHandoff.GET as Handler, `/api/v1/threads/${encoded}/handoff`, readToken, { key: thread }));
      check("GET /threads/:key/handoff.md", await get(handoffMd.GET as Handler, `/threads/${encoded}/handoff.md`, readToken, { key: thread }));
      const id = packetIds[i]!;
      check("GET /api/v1/packets/:id", await get(packetById.GET as Handler, `/api/v1/packets/${id}`, readToken, { id }));
      check("GET /api/v1/packets/:id/markdown", await get(packetMarkdown.GET as Handler, `/api/v1/packets/${id}/markdown`, readToken, { id }));
    }

    // What the pages render from: the thread page's data (with its report files read), the board, risks and questions pages.
    const detail = await getThreadDetail(key!);
    const active = await getPacket(detail.active_packet.id);
    const verdict = await readVerdictCached(active.id, active.canonical.verdict_pointer, workspaceRootsFor({ workspaceRoot: active.workspace_root, project: active.canonical.project ?? null }), {
      fresh: true,
      inlineVerdict: active.canonical.verdict,
    });
    // The reports were read, not refused: their findings are on the page, redacted.
    expect(JSON.stringify(verdict)).toContain("[redacted:");
    check("thread page data", JSON.stringify({ detail, active, verdict, events: await listThreadEvents(key!) }));
    check("board page data", JSON.stringify(await loadBoard(threadFiltersSchema.parse({}))));
    check("risks page data", JSON.stringify(await listRisks()));
    check("questions page data", JSON.stringify(await listOpenQuestions()));

    // Webhooks: what the local receiver got, generic and Slack bodies alike.
    await notifyUntilIdle({ publicUrl: "https://baton.example.com" });
    for (let i = 0; i < 200 && (await deliverStep({ timeoutMs: 5_000 })); i++);
    expect(receiver.requests.length).toBeGreaterThanOrEqual(4);
    const events = new Set(receiver.requests.map((request) => (JSON.parse(request.body.toString("utf8")) as { event?: string }).event).filter(Boolean));
    expect([...events]).toEqual(expect.arrayContaining(["risk.critical", "question.asked", "decision.approved"]));
    for (const request of receiver.requests) check("webhook bodies received", `${request.path}\n${request.body.toString("utf8")}`);

    // The database: every row of every table.
    const tables = await everyRow();
    for (const [table, rows] of tables) check(`table ${table}`, rows);
    // The search looked where the packets are: their redacted forms are there.
    expect(tables.some(([, rows]) => rows.includes("[redacted:"))).toBe(true);
    expect(found).toEqual([]);
  }, 180_000); // every output of every corpus thread: 16 s alone on PostgreSQL, far more on a loaded 2-core machine

  // SQLite's own files, byte for byte (pages freed by an update, the WAL): on PostgreSQL the rows above are the check.
  it.skipIf(testsRunOnPostgresql())("no secret is anywhere in the SQLite files' bytes", () => {
    const { dir } = temp();
    const files = readdirSync(dir).filter((name) => name.startsWith("baton.db"));
    expect(files).toContain("baton.db");
    const found: string[] = [];
    for (const name of files) found.push(...search("SQLite file bytes", readFileSync(path.join(dir, name)).toString("latin1")));
    expect(found).toEqual([]);
  });

  it("the corpus is what the brief asked for: over 100 secrets of over 40 kinds, each placed in at least three ways", () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(100);
    expect(LABELS.length).toBeGreaterThanOrEqual(40);
    for (const label of LABELS) expect(placed.get(label)?.size ?? 0, label).toBeGreaterThanOrEqual(3);
  });
});
