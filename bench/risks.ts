/**
 * bench:risks: does a page of GET /api/v1/risks cost a page, whatever the number of active risks?
 *
 * In this process: a real HTTP server running the risks route handler on a fresh SQLite file
 * (or, with DATABASE_URL=postgresql://..., a database of the run's own, dropped at the end).
 * Seeds through the real ingest path BENCH_BIG_PACKETS packets at a packet's risk limit (5,000
 * each, each its own thread: 25,000 active risks by default) and a board of BENCH_THREADS threads
 * with 3 risks each (one of them shared by 10 threads), then triages a few (snoozed until a date,
 * resolved). Then it asks, interleaved, BENCH_REQUESTS times each after 3 warm-ups:
 *   - the stored groups (docs/decisions/075-risk-groups-stored.md): the first page and the next
 *     (its cursor) in three orders, attention (the default), last seen A to Z, detail Z to A;
 *   - the same pages computed over every active risk, as every page was before decision 075
 *     (a text filter the views still compute: `q=risk` matches every seeded risk's detail).
 * It prints p50/p95 ms, this process's p50 CPU ms (on SQLite the database's work is in it) and the
 * answer's bytes per page, the ratio computed / stored, and the
 * writers' side: each big packet's ingest, one more 5,000-risk packet replacing a big one, a
 * triage of 100 risks (each only marks what changed), the refresh after commit of what they
 * marked (steps, one transaction each, the longest, and this process's CPU), and the read model built from the
 * stored risks as a database from before it gets it (in steps: docs/decisions/084-risk-groups-refreshed-after-commit.md).
 *
 * Env: BENCH_BIG_PACKETS (5), BENCH_THREADS (200), BENCH_REQUESTS (15), BENCH_WRITERS_ONLY (unset; 1: no pages,
 * the writers' side only, to compare it with a build without the read model); DATABASE_URL (above).
 * Exit: 0 measured; 1 could not set up or run; 2 a page was not what was seeded.
 */
import { performance } from "node:perf_hooks";
import { chooseDatabase, cleanUpDatabase } from "./lib/server";
import { databaseCpu } from "./lib/stats";
import { fixed, formatTable, gitRevision, positiveNumber } from "./lib/report";
import { startRouteServer } from "../testing/route-server";
import { GET } from "../app/api/v1/risks/route";
import { createApiToken } from "../lib/auth/tokens";
import { createFirstAdmin } from "../lib/auth/users";
import { closeDatabase, sqlExecutor } from "../lib/db/client";
import { migrateDatabase } from "../lib/db/migrate/index";
import { Prisma } from "../lib/generated/prisma/client";
import { ingestPacket } from "../lib/ingest/ingest";
import { riskFingerprint } from "../lib/contract/fingerprint";
import { PACKET_LIST_LIMITS } from "../lib/contract/schema";
import { resetConfig } from "../lib/server/config";
import { riskListDto } from "../lib/views/risks/dto";
import { refreshRiskGroups } from "../lib/views/risks/read-model";
import { triageRisks } from "../lib/views/risks/triage";

const SEVERITIES = ["critical", "high", "medium", "low", "info"];
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await work();
  return { ms: performance.now() - start, value };
}

interface Refreshed {
  ms: number;
  value: { steps: number; longestStepMs: number; cpuMs: number };
  /** PostgreSQL's backends for the run's database meanwhile (null on SQLite: its work is in the process's CPU). */
  databaseCpuMs: number | null;
}

async function main(): Promise<void> {
  const bigPackets = positiveNumber("BENCH_BIG_PACKETS", 5, true);
  const boardThreads = positiveNumber("BENCH_THREADS", 200, true);
  const requests = positiveNumber("BENCH_REQUESTS", 15, true);
  const perPacket = PACKET_LIST_LIMITS.open_risks;
  const database = await chooseDatabase(`risks_${Date.now().toString(36)}`, false);
  process.env.DATABASE_URL = database.url;
  process.env.BATON_RATE_LIMIT_PER_MINUTE = "0";
  resetConfig();
  await migrateDatabase(database.url);
  const admin = await createFirstAdmin({ username: "bench", password: "a long enough password" });
  const person = { id: admin.id, username: admin.username, role: admin.role };
  const token = (await createApiToken("bench-reader", ["packets:read"])).token;
  const server = await startRouteServer((request) => GET(request));
  const refresh = async (): Promise<Refreshed> => {
    const databaseStart = await databaseCpu(database);
    const run = await timed(() => refreshRiskGroups());
    return { ...run, databaseCpuMs: databaseStart ? await databaseStart.since() : null };
  };
  console.log(`bench:risks at ${gitRevision()} on ${database.description}: ${bigPackets} x ${perPacket} risks + ${boardThreads} threads x 3`);
  let failed = false;

  try {
    const started = Date.now() - 3_600_000;
    const bigIngest: number[] = [];
    const bigPacket = (packet: number, version: number) => ({
      thread: `bench/big-${packet}`,
      summary: `many risks, version ${version}`,
      next_action: "continue",
      open_risks: Array.from({ length: perPacket }, (_, n) => ({ severity: SEVERITIES[(n + version) % SEVERITIES.length], detail: `paged risk P${packet}-R${n} of the big packet` })),
    });
    for (let packet = 0; packet < bigPackets; packet++) {
      bigIngest.push((await timed(() => ingestPacket(bigPacket(packet, 0), { kind: "http", actor: "bench" }, new Date(started + packet * 1000)))).ms);
    }
    const boardStart = performance.now();
    for (let thread = 0; thread < boardThreads; thread++) {
      const open_risks = [
        { severity: SEVERITIES[thread % 5]!, detail: `board risk T${thread}-a of thread ${thread % 7}` },
        { severity: SEVERITIES[(thread + 2) % 5]!, detail: `board risk T${thread}-b` },
        { severity: "high", detail: `shared risk S${thread % 20} across threads` },
      ];
      await ingestPacket({ thread: `bench/board-${thread}`, summary: "board", next_action: "continue", open_risks }, { kind: "http", actor: "bench" }, new Date(started + 10_000 + thread * 100));
    }
    const boardMs = performance.now() - boardStart;
    // Snoozed until a date and resolved: the default view hides them, the read model keeps their clock.
    const targets = Array.from({ length: 100 }, (_, n) => ({ thread_key: `bench/big-0`, fingerprint: riskFingerprint(`paged risk P0-R${n} of the big packet`) }));
    const triage = await timed(() => triageRisks(person, { action: "snoozed", targets, snoozed_until: new Date(Date.now() + 86_400_000) }));
    await triageRisks(person, { action: "resolved", targets: [{ thread_key: "bench/board-0", fingerprint: riskFingerprint("board risk T0-b") }] });
    // What the seed marked, refreshed as a server's background does after commit: the pages below read stored groups.
    const seedRefresh = await refresh();

    // Every group, less the 100 snoozed and the 1 resolved (the default view hides them).
    const groups = bigPackets * perPacket + boardThreads * 2 + Math.min(20, boardThreads) - 101;
    const cases = [
      { name: "attention", query: "" },
      { name: "last seen, A to Z", query: "&sort=last_seen&order=asc" },
      { name: "detail, Z to A", query: "&sort=detail&order=desc" },
    ];
    const get = async (query: string) => {
      const start = performance.now();
      const cpu = process.cpuUsage();
      const response = await fetch(`${server.url}/api/v1/risks?limit=100${query}`, { headers: { authorization: `Bearer ${token}` } });
      const text = await response.text();
      const ms = performance.now() - start;
      const used = process.cpuUsage(cpu);
      const cpuMs = (used.user + used.system) / 1000;
      if (response.status !== 200) throw new Error(`GET /api/v1/risks?${query}: ${response.status} ${text.slice(0, 200)}`);
      return { ms, cpuMs, bytes: Buffer.byteLength(text), list: riskListDto.parse(JSON.parse(text)) };
    };

    const rows: string[][] = [];
    const ratios: string[] = [];
    for (const { name, query } of process.env.BENCH_WRITERS_ONLY === "1" ? [] : cases) {
      const variants = [
        { how: "stored", query },
        { how: "computed", query: `${query}&q=risk` },
      ];
      // The cursors of the first pages: the next page is asked with them. Both ways list the same groups.
      const cursors = new Map<string, string>();
      const listed = new Map<string, string>();
      for (const variant of variants) {
        const first = await get(variant.query);
        const next = await get(`${variant.query}&cursor=${first.list.next_cursor}`);
        listed.set(variant.how, JSON.stringify([...first.list.groups, ...next.list.groups].map((group) => group.fingerprint)));
        if (first.list.total !== groups || !first.list.groups.length) {
          console.log(`!!! ${name}, ${variant.how}: total ${first.list.total} and ${first.list.groups.length} groups, expected ${groups}`);
          failed = true;
        }
        cursors.set(variant.how, first.list.next_cursor!);
      }
      if (listed.get("stored") !== listed.get("computed")) {
        console.log(`!!! ${name}: the stored and computed first two pages differ`);
        failed = true;
      }
      const samples = new Map<string, { ms: number[]; cpuMs: number[]; bytes: number }>();
      for (let round = 0; round < requests + 3; round++) {
        for (const variant of variants) {
          for (const page of ["first", "next"] as const) {
            const answer = await get(page === "first" ? variant.query : `${variant.query}&cursor=${cursors.get(variant.how)}`);
            if (round < 3) continue;
            const key = `${variant.how} ${page}`;
            const sample = samples.get(key) ?? { ms: [], cpuMs: [], bytes: answer.bytes };
            sample.ms.push(answer.ms);
            sample.cpuMs.push(answer.cpuMs);
            samples.set(key, sample);
          }
        }
      }
      for (const [key, sample] of samples) {
        const sorted = [...sample.ms].sort((a, b) => a - b);
        rows.push([name, key, fixed(percentile(sorted, 50), 1), fixed(percentile(sorted, 95), 1), fixed(percentile([...sample.cpuMs].sort((a, b) => a - b), 50), 1), String(sample.bytes)]);
      }
      for (const page of ["first", "next"]) {
        const p50 = (how: string) => percentile([...samples.get(`${how} ${page}`)!.ms].sort((a, b) => a - b), 50);
        ratios.push(`${name}, ${page} page: computed / stored p50 = ${fixed(p50("computed") / p50("stored"), 1)}x`);
      }
    }

    // Five replacements, each refreshed after it as a server's refresher would: the ingests' own cost, and the refreshes'.
    const replaces: number[] = [];
    const replaceRefreshes: Refreshed[] = [];
    for (let version = 1; version <= 5; version++) {
      replaces.push((await timed(() => ingestPacket(bigPacket(0, version), { kind: "http", actor: "bench" }, new Date()))).ms);
      replaceRefreshes.push(await refresh());
    }
    const replaceRefresh = replaceRefreshes.reduce((worst, run) => (run.ms > worst.ms ? run : worst));
    const smallIngest: number[] = [];
    for (let n = 0; n < 20; n++) {
      const open_risks = [{ severity: "low", detail: `board risk T${n}-a of thread ${n % 7}` }, { severity: "high", detail: `small risk ${n}` }, { severity: "high", detail: `shared risk S${n % 20} across threads` }];
      smallIngest.push((await timed(() => ingestPacket({ thread: `bench/board-${n}`, summary: "small", next_action: "continue", open_risks }, { kind: "http", actor: "bench" }, new Date()))).ms);
    }
    const smallRefresh = await refresh();
    // A database from before the model: no build's name. A new client forgets that this one began its build.
    await (await sqlExecutor()).execute(Prisma.sql`DELETE FROM "ReadModelBuild"`);
    await closeDatabase();
    const build = await refresh();

    console.log(`\nGET /api/v1/risks, limit=100, ${groups} groups, ${requests} requests per row (interleaved, after 3 warm-ups)\n`);
    console.log(formatTable(["order", "page", "p50 ms", "p95 ms", "p50 CPU ms", "bytes"], rows));
    console.log(`\n${ratios.join("\n")}`);
    console.log(`\nwriters: big packet ingest ${bigIngest.map((ms) => fixed(ms, 0)).join(", ")} ms; ${boardThreads} board packets ${fixed(boardMs, 0)} ms in all`);
    console.log(`writers: a 5,000-risk packet replacing one, 5 times ${replaces.map((ms) => fixed(ms, 0)).join(", ")} ms (median ${fixed(percentile([...replaces].sort((x, y) => x - y), 50), 0)}); triage of 100 risks ${fixed(triage.ms, 0)} ms`);
    const sortedSmall = [...smallIngest].sort((a, b) => a - b);
    console.log(`writers: 20 three-risk packets, p50 ${fixed(percentile(sortedSmall, 50), 1)} ms, max ${fixed(sortedSmall.at(-1)!, 1)} ms`);
    const refreshed = (name: string, run: Refreshed) =>
      `refresh after commit, ${name}: ${fixed(run.ms, 0)} ms in ${run.value.steps} steps, longest step ${fixed(run.value.longestStepMs, 0)} ms, ` +
      `CPU ${fixed(run.value.cpuMs, 0)} ms in this process${run.databaseCpuMs === null ? "" : ` + ${fixed(run.databaseCpuMs, 0)} ms in PostgreSQL's backends`}`;
    console.log(refreshed("the seed", seedRefresh));
    console.log(refreshed("the slowest 5,000-risk replacement (both versions' groups)", replaceRefresh));
    console.log(refreshed("the 20 small packets", smallRefresh));
    console.log(refreshed("the build of a database from before the model", build));
  } finally {
    await server.close();
    await closeDatabase();
    await cleanUpDatabase(database);
  }
  if (failed) process.exitCode = 2;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
