import { soakSize } from "@/testing/soak";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as board from "@/app/api/v1/board/route";
import * as questions from "@/app/api/v1/questions/route";
import * as risks from "@/app/api/v1/risks/route";
import type { Person } from "../../lib/auth/roles";
import { createApiToken } from "../../lib/auth/tokens";
import { createFirstAdmin } from "../../lib/auth/users";
import { loadBoard } from "../../lib/board/board";
import { resetConfig } from "../../lib/server/config";
import { database } from "../../lib/db/client";
import { decide } from "../../lib/human/actions";
import { listOpenQuestions } from "../../lib/views/questions/inbox";
import { PACKET_LIST_LIMITS } from "../../lib/contract/schema";
import { fakeChars } from "@/testing/fake-secrets";
import { listRisks } from "../../lib/views/risks/queries";
import { triageRisks } from "../../lib/views/risks/triage";
import { TRIAGE_TARGETS_MAX, type RiskListDto } from "../../lib/views/risks/dto";
import { recordFigure } from "@/testing/reliability";
import { freshDatabaseForThisFile } from "@/testing/temp-database";
import { allowWebhookTargetsForThisFile } from "@/testing/webhook-targets";
import { threadFiltersSchema } from "../../lib/views/threads/filters";
import { ingestHandoffFile } from "../../lib/ingest/watch/ingest-file";
import { recordWatchdogFindings } from "../../lib/board/watchdog/findings";
import { checkStale } from "../../lib/board/watchdog/stale";
import { deliverStep } from "../../lib/notify/deliver";
import { NOTIFICATION_EVENTS } from "../../lib/notify/events";
import { notifyUntilIdle } from "../../lib/notify/notifier";
import { startTestReceiver, type TestReceiver } from "@/testing/webhook-receiver";
import { newWebhookSchema } from "../../lib/notify/dto";
import { createWebhook } from "../../lib/notify/webhooks";
import { scheduleWriteBack } from "../../lib/human/writeback/write-human-section";
import { createWriteToken, packetRequest, send } from "@/testing/hardening/ingest-harness";

/**
 * Volume: 5,000 risks, 5,000 questions and 5,000 changed files (2,000 each in `npm test`), within
 * PACKET_LIST_LIMITS (one packet carries all the risks and files and 1,000
 * questions; four more packets 1,000 questions each), through ingest (a watched
 * file and HTTP), the board, the risks API and page data, triage of every risk,
 * the watchdog, webhooks (derive and delivery to a local receiver) and write-back.
 * Nothing may throw (no "too many SQL variables" or bind-parameter errors on either
 * database) and every list must be whole.
 */

freshDatabaseForThisFile();
allowWebhookTargetsForThisFile("127.0.0.1");
const SECTION = "volume";
const ORIGIN = "http://baton.test";
// 2,000 in `npm test` (over SQLite's 999 parameters and four IN chunks); 5,000 in `npm run test:soak`.
const N = soakSize(2_000, 5_000);
const QUESTIONS_PER_PACKET = PACKET_LIST_LIMITS.questions_for_human;
const BIG = "volume/big";
const QUESTION_THREADS = Array.from({ length: N / QUESTIONS_PER_PACKET - 1 }, (_, i) => `volume/questions-${i + 1}`);

const timings: [string, number][] = [];
async function timed<T>(name: string, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await work();
  timings.push([name, Math.round(performance.now() - started)]);
  return result;
}

function bigPacket(severity: "high" | "critical"): Record<string, unknown> {
  return {
    thread: BIG,
    summary: "A very large change",
    next_action: "review it",
    changed_files: Array.from({ length: N }, (_, i) => ({ path: `src/module-${i}/file-${i}.ts`, change: "modified" })),
    // Not whole-number tokens: "risk 3" and "risk 4" share a fingerprint (lib/contract/fingerprint.ts).
    open_risks: Array.from({ length: N }, (_, i) => ({ severity, detail: `risk R-${i}: module-${i} may break` })),
    questions_for_human: Array.from({ length: QUESTIONS_PER_PACKET }, (_, i) => ({ id: `big-${i}`, question: `Big question ${i}?` })),
  };
}

let writeToken = "";
let readToken = "";
let person: Person;
let workDir = "";
let handoffFile = "";
let receiver: TestReceiver;
let bigPacketId = "";
const savedRate = process.env.BATON_RATE_LIMIT_PER_MINUTE;

beforeAll(async () => {
  process.env.BATON_RATE_LIMIT_PER_MINUTE = "0";
  resetConfig();
  writeToken = await createWriteToken("volume");
  readToken = (await createApiToken("volume-reader", ["packets:read"])).token;
  const admin = await createFirstAdmin({ username: "volume-admin", password: fakeChars(20, 3) });
  person = { id: admin.id, username: admin.username, role: admin.role };
  workDir = await mkdtemp(path.join(tmpdir(), "baton-volume-"));
  const dir = path.join(workDir, "ws", "outputs", "handoff", "big");
  await mkdir(dir, { recursive: true });
  handoffFile = path.join(dir, "handoff.json");
  receiver = await startTestReceiver();
  await createWebhook("volume-admin", newWebhookSchema.parse({ name: "volume", url: receiver.url, format: "generic", events: [...NOTIFICATION_EVENTS], secret: fakeChars(24, 4) }));
});

afterAll(async () => {
  await receiver?.close();
  await rm(workDir, { recursive: true, force: true });
  if (savedRate === undefined) delete process.env.BATON_RATE_LIMIT_PER_MINUTE;
  else process.env.BATON_RATE_LIMIT_PER_MINUTE = savedRate;
  resetConfig();
  if (timings.length) {
    recordFigure(SECTION, "items", `${N} risks, ${N} questions, ${N} changed files`, `one packet with all the risks and files (twice: high, then critical) and ${QUESTIONS_PER_PACKET} questions, ${QUESTION_THREADS.length} more with ${QUESTIONS_PER_PACKET} questions each`);
    for (const [name, ms] of timings) recordFigure(SECTION, `${name} (ms)`, ms);
  }
});

type Handler = (request: Request, segment: { params: Promise<Record<string, never>> }) => Promise<Response>;
const get = async (handler: Handler, url: string) => {
  const response = await handler(new Request(`${ORIGIN}${url}`, { headers: { authorization: `Bearer ${readToken}` } }), { params: Promise.resolve({}) });
  const text = await response.text();
  expect(response.status, text.slice(0, 300)).toBe(200);
  return JSON.parse(text) as unknown;
};

const riskThreads = (list: RiskListDto) => list.groups.flatMap((group) => group.threads);

describe("5,000 risks, questions and files", () => {
  it("are ingested: a watched file twice (high, then critical) and packets over HTTP", async () => {
    await writeFile(handoffFile, JSON.stringify(bigPacket("high")));
    const first = await timed("ingest 5,000 risks and files (watched file)", () => ingestHandoffFile(handoffFile, { settleMs: 0 }));
    expect(first.kind).toBe("ingested");
    await writeFile(handoffFile, JSON.stringify(bigPacket("critical")));
    const second = await timed("ingest them again, all critical (watched file)", () => ingestHandoffFile(handoffFile, { settleMs: 0 }));
    if (second.kind !== "ingested") throw new Error(`expected the second version to be ingested, got ${second.kind}`);
    expect(second.result.duplicate).toBe(false);
    bigPacketId = second.result.packet_id;

    for (const [t, thread] of QUESTION_THREADS.entries()) {
      const packet = {
        thread,
        summary: `questions ${t}`,
        next_action: "answer",
        questions_for_human: Array.from({ length: QUESTIONS_PER_PACKET }, (_, i) => ({ id: `q-${i}`, question: `Question ${i} of thread ${t}?`, options: ["yes", "no"] })),
      };
      const sent = await timed(`ingest ${QUESTIONS_PER_PACKET} questions (HTTP)`, () => send(packetRequest(writeToken, JSON.stringify(packet))));
      expect(sent.status, JSON.stringify(sent.json).slice(0, 300)).toBe(201);
    }
    const db = await database();
    expect(await db.packetVersion.count()).toBe(2 + QUESTION_THREADS.length);
  });

  it("the board shows every thread, by function and by API", async () => {
    const loaded = await timed("board (page data)", () => loadBoard(threadFiltersSchema.parse({})));
    expect(loaded.total).toBe(1 + QUESTION_THREADS.length);
    const api = (await timed("GET /api/v1/board", () => get(board.GET as Handler, "/api/v1/board"))) as { total: number; columns: { cards: { key: string; active_packet: { risk_counts: Record<string, number>; question_count: number } }[] }[] };
    expect(api.total).toBe(1 + QUESTION_THREADS.length);
    const card = api.columns.flatMap((column) => column.cards).find((item) => item.key === BIG);
    expect(card?.active_packet).toMatchObject({ risk_counts: { critical: N }, question_count: QUESTIONS_PER_PACKET });
  });

  it("the risks API and page data list all 5,000, the questions all 5,000", async () => {
    const listed = await timed("risks (page data)", () => listRisks({ state: "all" }));
    expect(riskThreads(listed)).toHaveLength(N);
    expect(new Set(listed.groups.map((group) => group.fingerprint)).size).toBe(N);
    // The API pages (lib/views/risks/paging.test.ts): every page, each bounded.
    const api = await timed("GET /api/v1/risks?state=all, every page", async () => {
      const pages: RiskListDto[] = [];
      let cursor: string | null = null;
      do {
        pages.push((await get(risks.GET as Handler, `/api/v1/risks?state=all&limit=500${cursor ? `&cursor=${cursor}` : ""}`)) as RiskListDto);
        cursor = pages.at(-1)!.next_cursor;
      } while (cursor);
      return pages.flatMap(riskThreads);
    });
    expect(api).toHaveLength(N);
    expect(api.every((risk) => risk.severity === "critical" && risk.occurrences === 2)).toBe(true);

    const inbox = await timed("questions (page data)", () => listOpenQuestions());
    expect(inbox.total).toBe(N);
    expect(inbox.groups.reduce((sum, group) => sum + group.items.length, 0)).toBe(N);
    const apiInbox = (await timed("GET /api/v1/questions", () => get(questions.GET as Handler, "/api/v1/questions"))) as { total: number };
    expect(apiInbox.total).toBe(N);
  });

  // One upsert per risk (lib/views/risks/triage.ts): about 4 s per 1,000 on SQLite, 6 s on PostgreSQL here.
  it("triage acknowledges all 5,000, as many at once as a request may name", { timeout: 120_000 }, async () => {
    const groups = (await listRisks({ state: "all" })).groups;
    const all = groups.flatMap((group) => group.threads.map((thread) => ({ thread_key: thread.thread_key, fingerprint: group.fingerprint })));
    expect(all).toHaveLength(N);
    let acknowledged = 0;
    for (let from = 0; from < all.length; from += TRIAGE_TARGETS_MAX) {
      const result = await timed(`triage ${TRIAGE_TARGETS_MAX} risks at once`, () => triageRisks(person, { action: "acknowledged", targets: all.slice(from, from + TRIAGE_TARGETS_MAX) }));
      acknowledged += result.triaged.filter((item) => item.state === "acknowledged").length;
    }
    expect(acknowledged).toBe(N);
    const after = riskThreads(await listRisks({ state: "all" }));
    expect(after.filter((risk) => risk.state === "acknowledged")).toHaveLength(N);
  });

  it("the watchdog checks them, two days on: every thread stale, and its findings recorded", async () => {
    // The round's parts, which throw (the round itself logs and carries on).
    const later = new Date(Date.now() + 48 * 3_600_000);
    const spells = await timed("watchdog: stale check", () => checkStale(later));
    expect(spells).toHaveLength(1 + QUESTION_THREADS.length);
    await timed("watchdog: findings", () => recordWatchdogFindings(later));
    const db = await database();
    expect(await db.ledgerEvent.count({ where: { kind: "thread_stale" } })).toBe(1 + QUESTION_THREADS.length);
  });

  it("webhooks derive and deliver every notification", async () => {
    await timed("webhooks: derive (notifyUntilIdle)", () => notifyUntilIdle({ publicUrl: "https://baton.example.com" }));
    await timed("webhooks: deliver", async () => {
      for (let i = 0; i < 500 && (await deliverStep({ timeoutMs: 10_000 })); i++);
    });
    const db = await database();
    const rows = await db.webhookDelivery.findMany({ select: { event: true, status: true, threadKey: true } });
    expect(rows.filter((row) => row.status !== "delivered")).toEqual([]);
    expect(receiver.requests).toHaveLength(rows.length);
    const events = rows.map((row) => `${row.event} ${row.threadKey}`);
    expect(events).toEqual(expect.arrayContaining([`risk.critical ${BIG}`, `question.asked ${BIG}`, ...QUESTION_THREADS.map((thread) => `question.asked ${thread}`)]));
    recordFigure(SECTION, "webhook deliveries", rows.length, `all delivered to a local receiver; largest body ${Math.max(...receiver.requests.map((request) => request.body.length))} bytes`);
  });

  it("write-back writes the human section into the 5,000-item file", async () => {
    await decide(person, BIG, { kind: "approved", packet_id: bigPacketId, base_revision: 0, note: "ship it" });
    await timed("write-back", () => scheduleWriteBack([BIG]));
    const written = JSON.parse(await readFile(handoffFile, "utf8")) as Record<string, unknown> & { open_risks: unknown[]; changed_files: unknown[] };
    expect(written.human).toMatchObject({ revision: 1, decision: { kind: "approved" } });
    expect(written.open_risks).toHaveLength(N);
    expect(written.changed_files).toHaveLength(N);
    const db = await database();
    expect(await db.ledgerEvent.count({ where: { threadKey: BIG, kind: "packet_written_back" } })).toBeGreaterThanOrEqual(1);
  });
});
