import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import Database from "better-sqlite3";
import { expect, test } from "./support/fixtures";
import { closedLoop, countByStatus, type SendOutcome } from "./support/ingest-load";
import { childPids, freePort, killOwnServer, logTail, migrateOwnDatabase, ownAgentToken, startOwnServer, stopOwnServer, type OwnServer } from "./support/own-server";
import { packetFactory } from "../bench/lib/packets";
import { checkDatabaseFile, type ConsistencyReport } from "../lib/events/consistency";
import { preparePacket } from "../lib/contract/prepare";
import { recordFigure } from "../testing/reliability";
import { soakSize } from "../testing/soak";

/**
 * Issue 8, item 4: kill the server with SIGKILL during sustained ingest, several
 * times; after each restart every packet that got a 2xx is present, no version is
 * half-stored, the ledger and the thread states agree, and the watched folder picks
 * up what it missed.
 *
 * A server of its own (production build, fresh SQLite file, a watched folder). Each
 * round: start it, check everything so far, then send packets over HTTP from
 * CONNECTIONS clients while handoff.json files keep appearing (and being rewritten)
 * in the watched folder; at a random moment SIGKILL Next's own process, keep writing
 * files while it is down, and start the next round. After the last kill, a final
 * start and check. The check is lib/events/consistency.ts (integrity_check included),
 * plus: every 2xx's packet id is stored, and every watched file's latest content.
 */

// npm test runs the short form; npm run test:soak the full one (testing/soak.ts).
const KILLS = Number(process.env.BATON_CRASH_KILLS ?? soakSize(2, 5));
const CONNECTIONS = 8;
const FILE_EVERY_MS = 100;
/** Every how many files one is an earlier file rewritten with new content (a new version at the same path). */
const REWRITE_EVERY = 5;
const KILL_AFTER_MS = { min: 1_500, max: 4_000 };
const DOWN_MS = 1_500;
/** How long the watched folder may take to catch up after a start (the initial scan dedupes every file). */
const CATCH_UP_TIMEOUT_MS = 60_000;
const SECTION = "crash-safety";

interface WatchedFile {
  file: string;
  /** The content hash of what the file holds now (its latest write). */
  hash: string;
  writtenWhileDown: boolean;
}

const isAck = (outcome: SendOutcome) => typeof outcome.status === "number" && outcome.status >= 200 && outcome.status < 300;

function storedState(file: string): { ids: Set<string>; hashes: Set<string> } {
  const db = new Database(file, { readonly: true });
  try {
    const rows = db.prepare(`SELECT "id", "contentHash" FROM "PacketVersion"`).all() as { id: string; contentHash: string }[];
    return { ids: new Set(rows.map((row) => row.id)), hashes: new Set(rows.map((row) => row.contentHash)) };
  } finally {
    db.close();
  }
}

let server: OwnServer | undefined;
let folder = "";

test.afterAll(async () => {
  await stopOwnServer(server);
  if (folder) rmSync(folder, { recursive: true, force: true });
});

test(`SIGKILL during sustained ingest, ${KILLS} times: every acknowledged packet survives, nothing is half-stored, and the watched folder catches up`, async () => {
  test.setTimeout(KILLS * 90_000 + 120_000);
  expect(KILLS).toBeGreaterThanOrEqual(1);
  folder = mkdtempSync(path.join(tmpdir(), "baton-e2e-crash-"));
  const file = path.join(folder, "baton.db");
  const databaseUrl = `file:${file}`;
  const watchDir = path.join(folder, "watched");
  mkdirSync(watchDir, { recursive: true });
  await migrateOwnDatabase(databaseUrl);
  let token = "";
  const port = await freePort();
  const env = { BATON_WATCH_DIRS: watchDir, BATON_WATCH_RESCAN_SECONDS: "1", BATON_RATE_LIMIT_PER_MINUTE: "0" };
  const packets = packetFactory(randomBytes(8).toString("hex"), 50, Date.now());

  const acked = new Map<string, number>();
  const files = new Map<string, WatchedFile>();
  const fileWrites = { total: 0, whileDown: 0, rewrites: 0 };
  const reports: ConsistencyReport[] = [];
  const catchUpMs: number[] = [];
  const killDelays: number[] = [];
  let cutByKills = 0;
  let down = false;

  const writeWatchedFile = (n: number) => {
    const rewrite = n % REWRITE_EVERY === REWRITE_EVERY - 1 && files.size > 0;
    const target = rewrite ? [...files.keys()][n % files.size]! : path.join(watchDir, `ws-${n}`, "outputs", "handoff", `session-${n}`, "handoff.json");
    const packet = {
      thread: `crash-watched-${rewrite ? path.basename(path.dirname(target)) : `session-${n}`}`,
      summary: `watched file ${n}${down ? ", written while the server was down" : ""}`,
      next_action: `step ${n}`,
      created_at: new Date().toISOString(),
      open_risks: [{ severity: n % 2 ? "high" : "low", detail: `watched risk ${n}` }],
      failed_attempts: n % 3 ? [] : [{ attempt: "npm test", reason: `case ${n}`, exit_code: 1 }],
    };
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, JSON.stringify(packet, null, 2));
    files.set(target, { file: target, hash: preparePacket(packet, Date.now()).contentHash, writtenWhileDown: down });
    fileWrites.total++;
    if (down) fileWrites.whileDown++;
    if (rewrite) fileWrites.rewrites++;
  };

  /** After a start: everything acknowledged is there, whole, and the folder catches up. */
  const verify = async (label: string) => {
    const started = performance.now();
    const pendingFiles = () => {
      const { hashes } = storedState(file);
      return [...files.values()].filter((watched) => !hashes.has(watched.hash));
    };
    await expect
      .poll(() => pendingFiles().length, { timeout: CATCH_UP_TIMEOUT_MS, intervals: [250], message: `${label}: the watched folder caught up:\n${logTail(server!)}` })
      .toBe(0);
    catchUpMs.push(performance.now() - started);
    const { ids } = storedState(file);
    const missing = [...acked.keys()].filter((id) => !ids.has(id));
    expect(missing, `${label}: every acknowledged packet is stored`).toEqual([]);
    const report = checkDatabaseFile(file);
    expect(report.problems, `${label}: the ledger holds together`).toEqual([]);
    expect(report.integrity).toBe("ok");
    expect(report.versionsAwaitingFailedAttempts).toBe(0);
    reports.push(report);
  };

  let fileNumber = 0;
  for (let round = 0; round <= KILLS; round++) {
    server = await startOwnServer({ databaseUrl, port, env });
    expect(childPids(server.pid), "the pid is Next's own server, not a wrapper").toEqual([]);
    if (round === 0) token = await ownAgentToken(server, "crash-agent", ["packets:write", "packets:read"]);
    down = false;
    if (round > 0) await verify(`after kill ${round}`);
    if (round === KILLS) break;

    const stop = new AbortController();
    const load = closedLoop({ port, token, concurrency: CONNECTIONS, stop: stop.signal, body: (seq) => packets.body(seq), firstSeq: round * 1_000_000 });
    const writer = setInterval(() => writeWatchedFile(fileNumber++), FILE_EVERY_MS);
    const delay = KILL_AFTER_MS.min + Math.random() * (KILL_AFTER_MS.max - KILL_AFTER_MS.min);
    killDelays.push(delay);
    await sleep(delay);
    // No new requests from here on; those out when the process dies are cut.
    stop.abort();
    await killOwnServer(server);
    down = true;
    const { outcomes } = await load;
    await sleep(DOWN_MS);
    clearInterval(writer);

    for (const outcome of outcomes.filter(isAck)) acked.set(outcome.packetId!, round);
    const wrong = outcomes.filter((outcome) => typeof outcome.status === "number" && !isAck(outcome));
    expect(wrong, `round ${round}: only 2xx answers before the kill (${JSON.stringify(countByStatus(outcomes))})`).toEqual([]);
    // The requests out when the process died: the kill landed during ingest.
    cutByKills += outcomes.filter((outcome) => typeof outcome.status === "string").length;
  }
  expect(cutByKills, "the kills cut requests in flight").toBeGreaterThan(0);
  expect(fileWrites.whileDown).toBeGreaterThan(0);
  await stopOwnServer(server);
  server = undefined;

  const last = reports.at(-1)!;
  const whileDown = [...files.values()].filter((watched) => watched.writtenWhileDown).length;
  recordFigure(SECTION, "kills", KILLS, `SIGKILL of Next's own process ${(KILL_AFTER_MS.min / 1000).toFixed(1)} to ${(KILL_AFTER_MS.max / 1000).toFixed(1)} s into sustained ingest (${killDelays.map((ms) => (ms / 1000).toFixed(1)).join(", ")} s)`);
  recordFigure(SECTION, "packets acknowledged", acked.size, `HTTP 2xx from ${CONNECTIONS} connections`);
  recordFigure(SECTION, "acknowledged packets present after restart", `${acked.size} of ${acked.size}`, "checked after every restart");
  recordFigure(SECTION, "missing", 0);
  recordFigure(SECTION, "requests cut by the kills", cutByKills, "no answer (connection reset): not acknowledged, may or may not be stored");
  recordFigure(SECTION, "integrity_check", last.integrity, `after each of ${reports.length} restarts`);
  recordFigure(SECTION, "consistency problems", 0, "lib/events/consistency.ts: versions whole, ledger and threads agreeing, after each restart");
  recordFigure(SECTION, "stored at the end", `${last.counts.versions} versions, ${last.counts.threads} threads, ${last.counts.ledgerEvents} ledger events`);
  recordFigure(SECTION, "watched files", `${files.size} files, ${fileWrites.total} writes`, `${fileWrites.rewrites} rewrites of an earlier file with new content`);
  recordFigure(SECTION, "watched files missed, then caught up", `${fileWrites.whileDown} written while the server was down (${whileDown} still their latest content); all caught up`, `every file's latest content stored after each restart, within ${Math.round(Math.max(...catchUpMs))} ms at most`);
});
