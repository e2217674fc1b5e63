import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { expect, test } from "./support/fixtures";
import { closedLoop, countByStatus, NOT_SENT, openLoop, percentile, probeNewConnections, sampleResponsiveness, type SendOutcome } from "./support/ingest-load";
import { freePort, logTail, migrateOwnDatabase, ownAgentToken, startOwnServer, stopOwnServer, type OwnServer } from "./support/own-server";
import { packetFactory } from "../bench/lib/packets";
import { checkDatabaseFile } from "../lib/events/consistency";
import { recordFigure } from "../testing/reliability";
import { soakSize } from "../testing/soak";

/**
 * Issue 8, item 3: under twice the sustainable load for 60 seconds the server keeps
 * answering and every acknowledged packet is stored.
 *
 * A server of its own (production build, fresh SQLite file, rate limits off: the load
 * is one token). First the sustainable rate: a closed loop of CONCURRENCY clients, as
 * bench:ingest measures it. Then an open loop at twice that rate for OVERLOAD_SECONDS
 * (BATON_OVERLOAD_SECONDS for local runs), from up to SOCKETS connections at once,
 * while a health check and the board are read on connections of their own.
 *
 * Asserted (correctness, not speed): no answer but 2xx, or 429/503 with Retry-After;
 * almost no connection errors and no timeouts; health and board answer throughout;
 * every packet acknowledged with a 2xx is stored, once, and the ledger holds
 * together. Rates and latencies are recorded in the reliability figures (this machine
 * is shared: they say how it went, not how fast Baton is).
 */

const envSeconds = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!(value > 0)) throw new Error(`${name} must be a positive number of seconds`);
  return value;
};
// npm test runs the short form; npm run test:soak the full one (testing/soak.ts). The short
// form is the least load that still overloads: the server's queue outgrows the closed loop's
// within the window on any machine, and sampling covers the drain after it (decision 078).
const OVERLOAD_SECONDS = envSeconds("BATON_OVERLOAD_SECONDS", soakSize(6, 60));
const MEASURE_SECONDS = envSeconds("BATON_OVERLOAD_MEASURE_SECONDS", soakSize(3, 10));
const WARMUP_SECONDS = soakSize(2, 5);
// Enough clients to keep the server busy (20, as bench:ingest uses, left it idle between answers here).
const CONCURRENCY = 64;
const SOCKETS = 256;
const MULTIPLIER = 2;
// Connection errors a loaded loopback may show (a keep-alive socket closed as it is reused): a bound, not a hope.
const MAX_NETWORK_ERROR_SHARE = 0.001;
// "Keeps answering": generous for a machine shared with other work.
const MAX_HEALTH_MS = 10_000;
const MAX_BOARD_MS = 20_000;
const THREADS = 200;
// Health and the board are sampled on connections kept open, each reused well within the
// server's keep-alive timeout (Node's 5 s, announced as Keep-Alive: timeout=5): a connection
// left idle for about 5 s may be closed by the server just as the next sample is written
// (ECONNRESET), which says nothing about the server's health.
const HEALTH_EVERY_MS = 1_000;
const BOARD_EVERY_MS = 2_000;
const SECTION = "overload";

const isAck = (outcome: SendOutcome) => typeof outcome.status === "number" && outcome.status >= 200 && outcome.status < 300;
const ms = (value: number) => `${Math.round(value)} ms`;

let server: OwnServer | undefined;
let folder = "";

test.afterAll(async () => {
  await stopOwnServer(server);
  if (folder) rmSync(folder, { recursive: true, force: true });
});

test(`under twice the sustainable ingest rate for ${OVERLOAD_SECONDS} s the server keeps answering and stores every acknowledged packet`, async () => {
  test.setTimeout((WARMUP_SECONDS + MEASURE_SECONDS + OVERLOAD_SECONDS) * 1000 + 240_000);
  folder = mkdtempSync(path.join(tmpdir(), "baton-e2e-overload-"));
  const file = path.join(folder, "baton.db");
  const databaseUrl = `file:${file}`;
  await migrateOwnDatabase(databaseUrl);
  server = await startOwnServer({ databaseUrl, port: await freePort(), env: { BATON_RATE_LIMIT_PER_MINUTE: "0" } });
  const token = await ownAgentToken(server, "overload-agent", ["packets:write", "packets:read"]);
  const target = { port: server.port, token };
  // ~4 KB packets in the contract's full shape, distinct, over 200 threads (as bench:ingest sends).
  const packets = packetFactory(randomBytes(8).toString("hex"), THREADS, Date.now());
  const body = (seq: number) => packets.body(seq);

  const warmup = await closedLoop({ ...target, concurrency: CONCURRENCY, seconds: WARMUP_SECONDS, body, firstSeq: 0 });
  const measured = await closedLoop({ ...target, concurrency: CONCURRENCY, seconds: MEASURE_SECONDS, body, firstSeq: 1_000_000 });
  const sustainable = measured.outcomes.filter(isAck).length / measured.seconds;
  expect(sustainable, `the closed loop stored packets:\n${JSON.stringify(countByStatus(measured.outcomes))}\n${logTail(server)}`).toBeGreaterThan(0);
  const offered = Math.max(2, MULTIPLIER * sustainable);

  const stopSampling = new AbortController();
  const health = sampleResponsiveness(server.port, "/api/v1/health", HEALTH_EVERY_MS, stopSampling.signal);
  const board = sampleResponsiveness(server.port, "/api/v1/board", BOARD_EVERY_MS, stopSampling.signal, { authorization: `Bearer ${token}` });
  const newConnections = probeNewConnections(server.port, "/api/v1/health", 5_000, stopSampling.signal);
  const loadAtStart = loadavg()[0]!;
  const overload = await openLoop({ ...target, ratePerSecond: offered, seconds: OVERLOAD_SECONDS, maxSockets: SOCKETS, body, firstSeq: 2_000_000 });
  stopSampling.abort();
  const [healthSamples, boardSamples, newConnectionSamples] = await Promise.all([health, board, newConnections]);
  expect(server.child.exitCode, `the server is still running:\n${logTail(server)}`).toBeNull();

  const sent = overload.outcomes.filter((outcome) => outcome.status !== NOT_SENT);
  const acks = sent.filter(isAck);
  const byStatus = countByStatus(sent);
  const refusedWell = (outcome: SendOutcome) => (outcome.status === 429 || outcome.status === 503) && outcome.retryAfter !== null;
  const wrongAnswers = sent.filter((outcome) => typeof outcome.status === "number" && !isAck(outcome) && !refusedWell(outcome));
  const networkErrors = sent.filter((outcome) => typeof outcome.status === "string");
  expect(wrongAnswers.slice(0, 5), `only 2xx, or 429/503 with Retry-After (${JSON.stringify(byStatus)}):\n${logTail(server)}`).toEqual([]);
  expect(networkErrors.filter((outcome) => outcome.status === "timeout"), "no request went unanswered").toEqual([]);
  expect(networkErrors.length, `connection errors (${JSON.stringify(byStatus)})`).toBeLessThanOrEqual(Math.floor(sent.length * MAX_NETWORK_ERROR_SHARE));
  expect(healthSamples.filter((sample) => sample.status !== 200), "health answered throughout").toEqual([]);
  expect(boardSamples.filter((sample) => sample.status !== 200), "the board answered throughout").toEqual([]);
  const healthMax = Math.max(...healthSamples.map((sample) => sample.ms));
  const boardMax = Math.max(...boardSamples.map((sample) => sample.ms));
  expect(healthMax, "health answered within the bound").toBeLessThan(MAX_HEALTH_MS);
  expect(boardMax, "the board answered within the bound").toBeLessThan(MAX_BOARD_MS);

  // Every acknowledged packet (all three phases) is stored, once; and the ledger holds together.
  const allAcks = [...warmup.outcomes, ...measured.outcomes, ...overload.outcomes].filter(isAck);
  expect(allAcks.every((outcome) => outcome.duplicate === false), "distinct packets are all new").toBe(true);
  const db = new Database(file, { readonly: true });
  let storedIds: Set<string>;
  let versionCount: number;
  try {
    storedIds = new Set((db.prepare(`SELECT "id" FROM "PacketVersion"`).all() as { id: string }[]).map((row) => row.id));
    versionCount = (db.prepare(`SELECT count(*) AS n FROM "PacketVersion"`).get() as { n: number }).n;
  } finally {
    db.close();
  }
  const missing = allAcks.filter((outcome) => !storedIds.has(outcome.packetId!));
  expect(missing.map((outcome) => outcome.packetId), "every acknowledged packet is stored").toEqual([]);
  expect(new Set(allAcks.map((outcome) => outcome.packetId)).size, "one version per acknowledged packet").toBe(allAcks.length);
  // Nothing stored beyond what was sent (a connection error may still have been stored: never more).
  expect(versionCount).toBeLessThanOrEqual(warmup.outcomes.length + measured.outcomes.length + sent.length);
  const report = checkDatabaseFile(file);
  expect(report.problems).toEqual([]);

  const serverMs = sent.map((outcome) => outcome.latencyMs - outcome.clientWaitMs);
  const dueMs = sent.map((outcome) => outcome.latencyMs);
  const healthMs = healthSamples.map((sample) => sample.ms);
  const count = (status: number) => sent.filter((outcome) => outcome.status === status).length;
  recordFigure(SECTION, "sustainable rate", `${sustainable.toFixed(1)} packets/s`, `closed loop, ${CONCURRENCY} connections, ${MEASURE_SECONDS} s, ~4 KB packets over ${THREADS} threads`);
  recordFigure(SECTION, "offered rate", `${offered.toFixed(1)} packets/s`, `${MULTIPLIER} x sustainable, open loop, up to ${SOCKETS} connections`);
  recordFigure(SECTION, "duration", `${OVERLOAD_SECONDS} s`, `${overload.seconds.toFixed(1)} s until the last answer`);
  recordFigure(SECTION, "requests due", overload.outcomes.length);
  recordFigure(SECTION, "requests sent", sent.length, `${overload.outcomes.length - sent.length} still waiting for one of the ${SOCKETS} connections when the time was up: dropped unsent (the senders' backlog)`);
  recordFigure(SECTION, "answered 2xx", acks.length, `${(acks.length / OVERLOAD_SECONDS).toFixed(1)} packets/s stored during the overload`);
  const storedRate = acks.length / overload.seconds;
  recordFigure(
    SECTION,
    "overloaded",
    storedRate < 0.9 * offered ? "yes" : "no",
    `stored ${storedRate.toFixed(1)} packets/s of ${offered.toFixed(1)} offered${storedRate < 0.9 * offered ? "" : ": the server kept up, the closed loop underestimated what it sustains on this shared machine"}`,
  );
  recordFigure(SECTION, "answered 429", count(429));
  recordFigure(SECTION, "answered 503", count(503));
  recordFigure(SECTION, "other answers", wrongAnswers.length, "any other status (500 included)");
  recordFigure(SECTION, "connection errors and timeouts", networkErrors.length, JSON.stringify(countByStatus(networkErrors)));
  recordFigure(SECTION, "latency from sending", `p50 ${ms(percentile(serverMs, 50))}, p99 ${ms(percentile(serverMs, 99))}, max ${ms(Math.max(...serverMs))}`, "from a connection to the answer (opening it included): the server's queue");
  const connects = sent.flatMap((outcome) => (outcome.connectMs === null ? [] : [outcome.connectMs]));
  recordFigure(SECTION, "connections opened", connects.length, `the TCP handshake took p50 ${ms(percentile(connects, 50))}, max ${ms(Math.max(...connects))} (the kernel completes it; the wait for the server to accept the connection counts in the latency)`);
  recordFigure(SECTION, "latency from due time", `p50 ${ms(percentile(dueMs, 50))}, p99 ${ms(percentile(dueMs, 99))}, max ${ms(Math.max(...dueMs))}`, "includes waiting for a free connection in the sender");
  recordFigure(SECTION, "health during the overload", `p50 ${ms(percentile(healthMs, 50))}, max ${ms(healthMax)}`, `${healthSamples.length} samples, one every ${HEALTH_EVERY_MS / 1000} s, all 200`);
  recordFigure(SECTION, "board during the overload", `max ${ms(boardMax)}`, `${boardSamples.length} samples, one every ${BOARD_EVERY_MS / 1000} s, all 200`);
  // Recorded, not asserted: Node accepts new connections slowly while its event loop is saturated by
  // connected clients (plain node:http does the same); admission control in front of Next is the remedy.
  const newConnectionMs = newConnectionSamples.map((sample) => sample.ms);
  recordFigure(
    SECTION,
    "health on a new connection during the overload",
    `p50 ${ms(percentile(newConnectionMs, 50))}, max ${ms(Math.max(...newConnectionMs))}`,
    `${newConnectionSamples.length} probes, one every 5 s, each on a connection of its own (${JSON.stringify(countByStatus(newConnectionSamples))}): a client not yet connected waits in the accept queue`,
  );
  recordFigure(SECTION, "acknowledged packets stored", `${allAcks.length - missing.length} of ${allAcks.length}`, "warm-up, measurement and overload; each once; ledger consistent");
  recordFigure(SECTION, "missing", missing.length);
  recordFigure(SECTION, "machine load average at the start", loadAtStart.toFixed(1), "1-minute load on this 2-core machine (other work included)");
});
