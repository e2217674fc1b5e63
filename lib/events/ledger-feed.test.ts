import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { config, sqliteFilePath } from "../server/config";
import { ingestPacket, type IngestSource } from "../ingest/ingest";
import type { LedgerEventDto } from "./ledger";
import { testsRunOnPostgresql } from "@/testing/postgresql";
import { useTempDatabase } from "@/testing/temp-database";
import { FEED_POLL_INTERVAL_MS, MAX_REPLAY_EVENTS } from "./feed-shared";
import { announceLedger } from "./bus";
import { ledgerFeedStatus, subscribeLedger } from "./ledger-feed";

let temp: Awaited<ReturnType<typeof useTempDatabase>>;
/** A second connection to the same file: what another process (the CLI, a second instance) would write with. */
let otherProcess: Database.Database;

beforeAll(async () => {
  if (testsRunOnPostgresql()) return;
  temp = await useTempDatabase();
  otherProcess = new Database(sqliteFilePath(temp.url));
});
afterAll(async () => {
  otherProcess?.close();
  await temp?.dispose();
});

const unsubscribes: Array<() => void> = [];
afterEach(() => {
  for (const unsubscribe of unsubscribes.splice(0)) unsubscribe();
  vi.useRealTimers();
  expect(ledgerFeedStatus().subscribers).toBe(0);
});

const http: IngestSource = { kind: "http", actor: "t" };
let counter = 0;
const uniqueThread = (label: string) => `${label}-${++counter}`;
const ingest = (thread: string) => ingestPacket({ thread, summary: `s ${thread}`, next_action: "n" }, http);

/** A subscriber that records what it hears. */
function listen(afterSeq: number | null) {
  const events: LedgerEventDto[] = [];
  const resets: number[] = [];
  const batches: number[] = [];
  const unsubscribe = subscribeLedger(
    afterSeq,
    (batch) => {
      batches.push(batch.length);
      events.push(...batch);
    },
    (seq) => resets.push(seq),
  );
  unsubscribes.push(unsubscribe);
  return { events, resets, batches, unsubscribe, seqs: () => events.map((event) => event.seq) };
}

function headSeq(): number {
  return (otherProcess.prepare(`SELECT MAX("seq") AS "seq" FROM "LedgerEvent"`).get() as { seq: number | null }).seq ?? 0;
}

/** Appends events the way another process would: straight into the file, no announcement in this process. */
function insertElsewhere(count: number, threadKey: string): void {
  const insert = otherProcess.prepare(
    `INSERT INTO "LedgerEvent" ("at", "kind", "threadKey", "versionId", "actor", "data") VALUES (?, 'thread_archived', ?, NULL, 'cli', '{"reason":"elsewhere"}')`,
  );
  otherProcess.transaction(() => {
    for (let i = 0; i < count; i++) insert.run(new Date().toISOString().replace("Z", "+00:00"), threadKey);
  })();
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

// SQLite's feed (its second connection, its poll); PostgreSQL's has postgresql-feed.test.ts.
describe.skipIf(testsRunOnPostgresql())("the ledger feed", () => {
  it("delivers an in-process ingest to a live subscriber at once, as DTOs", async () => {
    const thread = uniqueThread("live");
    const sub = listen(null);
    await ingest(thread);
    const committed = Date.now();
    await vi.waitFor(() => expect(sub.events.some((e) => e.thread_key === thread)).toBe(true), { timeout: 1_000, interval: 5 });
    // The bus, not the once-a-second check, brought it.
    expect(Date.now() - committed).toBeLessThan(FEED_POLL_INTERVAL_MS / 2);
    const event = sub.events.find((e) => e.thread_key === thread)!;
    expect(event).toMatchObject({ kind: "packet_received", actor: "t", thread_key: thread });
    expect(typeof event.packet_id).toBe("string");
    expect(new Date(event.at).toISOString()).toBe(event.at);
    expect(sub.resets).toEqual([]);
  });

  it("after a quiet spell a write goes out at once; writes within the next live batch window go out as one batch", async () => {
    const LIVE_BATCH_MS = config().BATON_LIVE_BATCH_MS;
    expect(LIVE_BATCH_MS).toBeGreaterThan(61);
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    // Whatever earlier tests published, the window is over.
    vi.advanceTimersByTime(LIVE_BATCH_MS);
    const sub = listen(null);
    const thread = uniqueThread("window");
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
    const write = () => {
      insertElsewhere(1, thread);
      announceLedger();
    };
    write();
    await nextTurn();
    expect(sub.batches).toEqual([1]);
    for (let i = 0; i < 3; i++) {
      vi.advanceTimersByTime(20);
      write();
    }
    await nextTurn();
    expect(sub.batches).toEqual([1]);
    vi.advanceTimersByTime(LIVE_BATCH_MS - 60 - 1);
    expect(sub.batches).toEqual([1]);
    vi.advanceTimersByTime(1);
    expect(sub.batches).toEqual([1, 3]);
    // Quiet again: the next write goes out on the next turn.
    vi.advanceTimersByTime(LIVE_BATCH_MS);
    write();
    await nextTurn();
    expect(sub.batches).toEqual([1, 3, 1]);
    expect(sub.seqs()).toEqual(range(sub.seqs()[0]!, headSeq()));
  });

  it("replays what came after a seq, then goes on live, without gaps or duplicates", async () => {
    const before = headSeq();
    for (let i = 0; i < 5; i++) await ingest(uniqueThread("replay"));
    const middle = before + 2;
    const sub = listen(middle);
    // The replay is synchronous: done when subscribeLedger returns.
    expect(sub.seqs()).toEqual(range(middle + 1, headSeq()));
    expect(ledgerFeedStatus().seq).toBe(headSeq());
    await ingest(uniqueThread("replay-live"));
    await vi.waitFor(() => expect(sub.seqs()).toEqual(range(middle + 1, headSeq())), { timeout: 1_000, interval: 5 });
    expect(sub.resets).toEqual([]);
  });

  it("subscribers joining while writes race in each see every event once, in order", async () => {
    const writes: Promise<unknown>[] = [];
    const subs: Array<{ from: number; sub: ReturnType<typeof listen> }> = [];
    for (let i = 0; i < 30; i++) {
      writes.push(ingest(uniqueThread("race")));
      if (i % 6 === 0) {
        const from = Math.max(0, headSeq() - 2);
        subs.push({ from, sub: listen(from) });
      }
      if (i % 4 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(writes);
    const head = headSeq();
    for (const { from, sub } of subs) {
      await vi.waitFor(() => expect(sub.seqs().at(-1)).toBe(head), { timeout: 2_000, interval: 5 });
      expect(sub.seqs()).toEqual(range(from + 1, head));
    }
  });

  it("a subscriber without a seq hears only what happens after it joined", async () => {
    await ingest(uniqueThread("old"));
    const sub = listen(null);
    expect(sub.events).toEqual([]);
    const thread = uniqueThread("new");
    await ingest(thread);
    await vi.waitFor(() => expect(sub.events.map((e) => e.thread_key)).toEqual([thread]), { timeout: 1_000, interval: 5 });
  });

  it("picks up another process's writes with the once-a-second check", async () => {
    // The check is the feed's setInterval: faked, and its reads are synchronous, so moving the clock runs it.
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const sub = listen(null);
    const thread = uniqueThread("elsewhere");
    insertElsewhere(3, thread);
    const head = headSeq();
    vi.advanceTimersByTime(FEED_POLL_INTERVAL_MS - 1);
    expect(sub.events).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(sub.seqs()).toEqual(range(head - 2, head));
    expect(sub.events.every((e) => e.kind === "thread_archived" && e.thread_key === thread && e.actor === "cli")).toBe(true);
    expect(sub.events[0]!.data).toEqual({ reason: "elsewhere" });
  });

  it("reads a long backlog in batches and delivers all of it in order", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const sub = listen(null);
    const from = headSeq();
    insertElsewhere(1_234, uniqueThread("backlog"));
    const head = headSeq();
    vi.advanceTimersByTime(FEED_POLL_INTERVAL_MS);
    expect(sub.seqs()).toEqual(range(from + 1, head));
    expect(Math.max(...sub.batches)).toBeLessThanOrEqual(500);
  });

  it("replays up to the limit, and past it sends a reset instead", async () => {
    insertElsewhere(MAX_REPLAY_EVENTS + 1, uniqueThread("missed"));
    const head = headSeq();

    const tooFar = listen(head - MAX_REPLAY_EVENTS - 1);
    expect(tooFar.events).toEqual([]);
    expect(tooFar.resets).toEqual([head]);

    const justEnough = listen(head - MAX_REPLAY_EVENTS);
    expect(justEnough.resets).toEqual([]);
    expect(justEnough.seqs()).toEqual(range(head - MAX_REPLAY_EVENTS + 1, head));

    // After the reset, live delivery goes on from the head.
    const thread = uniqueThread("after-reset");
    await ingest(thread);
    await vi.waitFor(() => expect(tooFar.events.map((e) => e.thread_key)).toEqual([thread]), { timeout: 1_000, interval: 5 });
  });

  it("sends a reset for a seq this ledger has not reached", () => {
    const head = headSeq();
    const sub = listen(head + 50);
    expect(sub.resets).toEqual([head]);
    expect(sub.events).toEqual([]);
  });

  it("refuses a negative or fractional seq", () => {
    expect(() => subscribeLedger(-1, () => {})).toThrow(RangeError);
    expect(() => subscribeLedger(1.5, () => {})).toThrow(RangeError);
    expect(ledgerFeedStatus()).toEqual({ subscribers: 0, running: false, seq: null });
  });

  it("one subscriber's failing callback does not stop the others", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      unsubscribes.push(
        subscribeLedger(null, () => {
          throw new Error("boom");
        }),
      );
      const sub = listen(null);
      const thread = uniqueThread("sturdy");
      await ingest(thread);
      await vi.waitFor(() => expect(sub.events.map((e) => e.thread_key)).toEqual([thread]), { timeout: 1_000, interval: 5 });
      expect(errors).toHaveBeenCalled();
    } finally {
      errors.mockRestore();
    }
  });

  it("the last unsubscribe stops the timer, the bus listener and the reads", async () => {
    const bus = (globalThis as unknown as { __batonLedgerBus: import("node:events").EventEmitter }).__batonLedgerBus;
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const setIntervalSpy = vi.spyOn(globalThis, "setInterval");
    const clearIntervalSpy = vi.spyOn(globalThis, "clearInterval");
    try {
      const first = listen(null);
      const second = listen(null);
      // One timer and one bus listener for the process, however many subscribers.
      expect(setIntervalSpy).toHaveBeenCalledTimes(1);
      const timer = setIntervalSpy.mock.results[0]!.value;
      expect(bus.listenerCount("ledger")).toBe(1);
      expect(ledgerFeedStatus()).toMatchObject({ subscribers: 2, running: true });

      first.unsubscribe();
      first.unsubscribe(); // idempotent
      expect(ledgerFeedStatus()).toMatchObject({ subscribers: 1, running: true });
      expect(clearIntervalSpy).not.toHaveBeenCalledWith(timer);

      second.unsubscribe();
      expect(clearIntervalSpy).toHaveBeenCalledWith(timer);
      expect(bus.listenerCount("ledger")).toBe(0);
      expect(ledgerFeedStatus()).toEqual({ subscribers: 0, running: false, seq: null });

      // Nothing is read or delivered any more.
      await ingest(uniqueThread("unheard"));
      insertElsewhere(1, uniqueThread("unheard-elsewhere"));
      expect(vi.getTimerCount()).toBe(0);
      vi.advanceTimersByTime(FEED_POLL_INTERVAL_MS * 3);
      // A bus announcement would be published on the next turn of the event loop.
      await new Promise((resolve) => setImmediate(resolve));
      expect(first.events).toEqual([]);
      expect(second.events).toEqual([]);
    } finally {
      setIntervalSpy.mockRestore();
      clearIntervalSpy.mockRestore();
    }
  });

  it("starts again from the current head for the next subscriber", async () => {
    const sub = listen(null);
    expect(ledgerFeedStatus()).toEqual({ subscribers: 1, running: true, seq: headSeq() });
    const thread = uniqueThread("restart");
    await ingest(thread);
    await vi.waitFor(() => expect(sub.events.map((e) => e.thread_key)).toEqual([thread]), { timeout: 1_000, interval: 5 });
  });
});
