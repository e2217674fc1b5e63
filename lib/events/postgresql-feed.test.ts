import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toLedgerEventDto, type LedgerEventDto } from "./ledger";
import { otherConnection, testsRunOnPostgresql, type OtherConnection } from "@/testing/postgresql";
import { useTempDatabase } from "@/testing/temp-database";
import { FEED_APPLICATION_NAME, PostgresqlLedgerFeed, type FeedRow } from "./postgresql-feed";
import { config } from "../server/config";

// The PostgreSQL feed (LISTEN/NOTIFY across instances); runs in the PostgreSQL pass (npm run test:postgresql).
describe.runIf(testsRunOnPostgresql())("the PostgreSQL ledger feed", () => {
  let temp: Awaited<ReturnType<typeof useTempDatabase>>;
  let writer: OtherConnection;
  const feeds: PostgresqlLedgerFeed[] = [];
  let serial = 0;

  beforeAll(async () => {
    temp = await useTempDatabase();
    writer = await otherConnection(temp.url);
  });
  afterAll(async () => {
    for (const feed of feeds) feed.stop();
    await writer.close();
    await temp.dispose();
  });

  function newFeed(maxReplay = 1_000, batchWindowMs = config().BATON_LIVE_BATCH_MS): PostgresqlLedgerFeed {
    const feed = new PostgresqlLedgerFeed({
      url: temp.url,
      readBatch: 50,
      maxReplay,
      // Long: these tests must pass on NOTIFY alone, not on the safety net.
      pollMs: 60_000,
      lingerMs: 60_000,
      toDtos: (rows: FeedRow[]) => rows.map((row) => toLedgerEventDto({ ...row, at: new Date(row.at) })),
      safely: (_what, call) => call(),
      liveBatchWait: (lastAt) => Math.max(0, lastAt + batchWindowMs - Date.now()),
    });
    feeds.push(feed);
    return feed;
  }

  /** What another instance commits: ledger events, announced only through the database. */
  async function append(count: number, threadKey = "pg/feed"): Promise<void> {
    const statements: [string, unknown[]][] = [];
    for (let i = 0; i < count; i++) {
      statements.push([
        `INSERT INTO "LedgerEvent" ("at", "kind", "threadKey", "versionId", "actor", "data") VALUES ($1, 'thread_reopened', $2, NULL, 'elsewhere', $3)`,
        [new Date(), threadKey, JSON.stringify({ n: ++serial })],
      ]);
    }
    await writer.transaction(statements);
  }

  function collect(feed: PostgresqlLedgerFeed, afterSeq: number | null) {
    const events: LedgerEventDto[] = [];
    const resets: number[] = [];
    const unsubscribe = feed.subscribe(afterSeq, { onEvents: (batch) => events.push(...batch), onReset: (seq) => resets.push(seq) });
    return { events, resets, unsubscribe };
  }

  const isConsecutive = (seqs: number[]) => seqs.every((seq, i) => i === 0 || seq > seqs[i - 1]!);

  it("hands two instances' subscribers what a third commits, through NOTIFY, in order", async () => {
    const [one, two] = [newFeed(), newFeed()];
    await Promise.all([one.start(), two.start()]);
    const [a, b] = [collect(one, null), collect(two, null)];
    await append(3);
    await append(2);
    await expect.poll(() => a.events.length, { timeout: 5_000 }).toBe(5);
    await expect.poll(() => b.events.length, { timeout: 5_000 }).toBe(5);
    expect(a.events.map((event) => event.seq)).toEqual(b.events.map((event) => event.seq));
    expect(isConsecutive(a.events.map((event) => event.seq))).toBe(true);
    a.unsubscribe();
    b.unsubscribe();
  });

  it("commits announced within the live batch window after a read reach the subscribers as one batch", async () => {
    // A long window, so that three small commits surely fall within it on a busy machine: it opens
    // at start()'s read, and with 1.5 s a saturated CI machine let it close after the first commit.
    const feed = newFeed(1_000, 4_000);
    await feed.start();
    const batches: number[][] = [];
    const unsubscribe = feed.subscribe(null, { onEvents: (batch) => batches.push(batch.map((event) => event.seq)) });
    // start() read once (what was committed while connecting): the window is open, so these wait for its end.
    await append(1);
    await append(1);
    await append(1);
    await expect.poll(() => batches.length, { timeout: 10_000 }).toBe(1);
    expect(batches[0]).toHaveLength(3);
    expect(isConsecutive(batches[0]!)).toBe(true);
    unsubscribe();
  });

  it("replays from memory what a subscriber missed, and resets one that asks beyond or before it", async () => {
    const feed = newFeed(5);
    await feed.start();
    await append(8);
    await feed.catchUp();
    const head = feed.seq;
    const recent = collect(feed, head - 3);
    expect(recent.events.map((event) => event.seq)).toEqual([head - 2, head - 1, head]);
    const beyond = collect(feed, head + 10);
    expect(beyond.resets).toEqual([head]);
    const tooOld = collect(feed, head - 7);
    expect(tooOld.resets).toEqual([head]);
    for (const subscriber of [recent, beyond, tooOld]) subscriber.unsubscribe();
  });

  it("reconnects after its connection is cut, and delivers what was committed meanwhile, once each", async () => {
    const feed = newFeed();
    await feed.start();
    const seen = collect(feed, null);
    await append(1);
    await expect.poll(() => seen.events.length, { timeout: 5_000 }).toBe(1);

    // What a database restart does to the connection: the server ends it.
    const admin = new pg.Client({ connectionString: temp.url });
    await admin.connect();
    const cut = await admin.query(
      `SELECT pg_terminate_backend(pid) AS "cut" FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`,
      [FEED_APPLICATION_NAME],
    );
    await admin.end();
    expect(cut.rowCount).toBeGreaterThanOrEqual(1);
    await append(4);

    await expect.poll(() => seen.events.length, { timeout: 10_000 }).toBe(5);
    const seqs = seen.events.map((event) => event.seq);
    expect(new Set(seqs).size).toBe(5);
    expect(isConsecutive(seqs)).toBe(true);
    // And it listens again: a later commit arrives without a poll.
    await append(1);
    await expect.poll(() => seen.events.length, { timeout: 5_000 }).toBe(6);
    seen.unsubscribe();
  }, 30_000);
});
