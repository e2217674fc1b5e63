/**
 * Seeds board threads through the real ingest path (validate, normalise, group
 * commit), in this process, straight into DATABASE_URL: no HTTP in between.
 * bench/board.ts runs it (see seeding.ts) with one SeedRequest as JSON in argv[2]:
 *
 *   DATABASE_URL=file:/tmp/x/baton.db tsx --conditions=react-server bench/lib/seed-board.ts '{"plan":{...},"from":0,"to":20,"chunk":256}'
 *
 * Progress goes to stderr; the last stdout line is `SEED_RESULT <SeedSummary JSON>`.
 *
 * The one difference from the server: commits do not wait for the disk. On
 * SQLite this connection commits with synchronous=NORMAL (WAL), not FULL; on
 * PostgreSQL its connections run with synchronous_commit=off (PGOPTIONS, read by
 * node-postgres when it connects). What is stored, and how, is the same. (With
 * FULL, this machine's fsyncs made seeding about 800 packets/s, mostly waiting.)
 */
import { performance } from "node:perf_hooks";
import { isPostgresqlUrl } from "../../lib/server/config";
import { closeDatabase, database } from "../../lib/db/client";
import { ingestWriterStats } from "../../lib/ingest/batch-writer";
import { ingestPacket, type IngestSource } from "../../lib/ingest/ingest";
import { boardPackets, SEED_RESULT_PREFIX, type SeedRequest, type SeedSummary } from "./board-packets";

const PROGRESS_EVERY_MS = 10_000;
const SIZE_SAMPLE_EVERY = 97;
const FAILURE_SAMPLES = 5;

async function seed(request: SeedRequest): Promise<SeedSummary> {
  const { plan, from, to, chunk } = request;
  const packets = boardPackets(plan);
  const source: IngestSource = { kind: "cli", actor: "bench" };
  const total = (to - from) * plan.threads;
  const summary: SeedSummary = {
    packets: 0, stored: 0, duplicates: 0, activeOnArrival: 0, supersededOnArrival: 0,
    failed: 0, failureSamples: [], seconds: 0, meanBytes: 0, commits: 0,
  };
  const sizes = { bytes: 0, count: 0 };
  const commitsBefore = ingestWriterStats().batches;
  const started = performance.now();
  let lastProgress = started;

  // Version-major order: each chunk is one or two versions of many threads, oldest-first within a version.
  for (let offset = 0; offset < total; offset += chunk) {
    const jobs: Promise<void>[] = [];
    for (let n = offset; n < Math.min(total, offset + chunk); n++) {
      const index = from + Math.floor(n / plan.threads);
      const { body, receivedAt } = packets.packet(n % plan.threads, index);
      if (n % SIZE_SAMPLE_EVERY === 0) {
        sizes.bytes += Buffer.byteLength(JSON.stringify(body));
        sizes.count++;
      }
      jobs.push(
        ingestPacket(body, source, receivedAt).then(
          (result) => {
            if (result.duplicate) summary.duplicates++;
            else if (result.active) summary.activeOnArrival++;
            else summary.supersededOnArrival++;
          },
          (error: unknown) => {
            summary.failed++;
            if (summary.failureSamples.length < FAILURE_SAMPLES) summary.failureSamples.push(error instanceof Error ? error.message : String(error));
          },
        ),
      );
    }
    await Promise.all(jobs);
    summary.packets += jobs.length;
    const now = performance.now();
    if (now - lastProgress >= PROGRESS_EVERY_MS) {
      lastProgress = now;
      const rate = summary.packets / ((now - started) / 1000);
      console.error(`seed: ${summary.packets}/${total} packets, ${rate.toFixed(0)}/s`);
    }
  }
  summary.stored = summary.activeOnArrival + summary.supersededOnArrival;
  summary.seconds = (performance.now() - started) / 1000;
  summary.meanBytes = sizes.count ? sizes.bytes / sizes.count : 0;
  summary.commits = ingestWriterStats().batches - commitsBefore;
  return summary;
}

async function main(): Promise<void> {
  const request = JSON.parse(process.argv[2] ?? "") as SeedRequest;
  try {
    if (isPostgresqlUrl(process.env.DATABASE_URL ?? "")) {
      // Before the first connection: every connection of the pool starts with it.
      process.env.PGOPTIONS = `${process.env.PGOPTIONS ?? ""} -c synchronous_commit=off`.trim();
      const [setting] = await (await database()).$queryRawUnsafe<{ synchronous_commit: string }[]>("SHOW synchronous_commit");
      if (setting?.synchronous_commit !== "off") throw new Error(`synchronous_commit is ${setting?.synchronous_commit ?? "unknown"} on the seeding connection, not off`);
    } else {
      await (await database()).$executeRawUnsafe("PRAGMA synchronous = NORMAL");
    }
    const summary = await seed(request);
    console.log(`${SEED_RESULT_PREFIX}${JSON.stringify(summary)}`);
  } finally {
    await closeDatabase();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: unknown) => {
    console.error(`seed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exitCode = 1;
  });
}
