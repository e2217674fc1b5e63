import "server-only";
import pg from "pg";
import { ANNOUNCE_CHANNEL } from "../db/migrate/schema-source";
import { announceLedger, onLedger } from "./bus";
import type { LedgerEventDto } from "./ledger";

/** The ledger feed on PostgreSQL: LISTEN/NOTIFY, one connection per instance (docs/decisions/010-live-updates.md). */

export interface FeedSubscriber {
  onEvents: (events: LedgerEventDto[]) => void;
  onReset?: (seq: number) => void;
}

export interface FeedRow {
  seq: number;
  at: string | number;
  kind: string;
  threadKey: string | null;
  versionId: string | null;
  actor: string;
  data: string;
}

export interface PostgresqlFeedOptions {
  url: string;
  readBatch: number;
  maxReplay: number;
  /** The safety net's period, and the longest wait between reconnection attempts. */
  pollMs: number;
  /** How long the feed stays up after its last subscriber left (a new one then joins at once). */
  lingerMs: number;
  toDtos: (rows: FeedRow[]) => LedgerEventDto[];
  safely: (what: string, call: () => void) => void;
  /** How long an announced read waits for more announcements, when the last one was asked for at `lastAt`. */
  liveBatchWait: (lastAt: number) => number;
}

// "at" as epoch milliseconds: node-postgres would read a zone-less timestamp in the process's local zone.
const EVENT_SELECT = `SELECT "seq", (EXTRACT(EPOCH FROM "at") * 1000)::float8 AS "at", "kind", "threadKey", "versionId", "actor", "data" FROM "LedgerEvent"`;
const FIRST_RETRY_MS = 250;
/** How the feed's connection shows in pg_stat_activity. */
export const FEED_APPLICATION_NAME = "baton-live-feed";

export class PostgresqlLedgerFeed {
  readonly subscribers = new Set<FeedSubscriber>();
  /** The highest seq published. */
  seq = 0;
  /** Published events in seq order; every event with seq > floor is here. */
  private recent: LedgerEventDto[] = [];
  private floor = 0;
  private client: pg.Client | null = null;
  private started: Promise<void> | null = null;
  private ready = false;
  private stopped = false;
  /** The last read asked for (reads run one after another). */
  private chain: Promise<void> = Promise.resolve();
  /** A read asked for that has not started yet. */
  private queued: Promise<void> | null = null;
  /** An announced read waiting for the end of the live batch window. */
  private batchTimer: NodeJS.Timeout | null = null;
  /** When the last announced read was asked for (the live batch window counts from it). */
  private lastAnnouncedReadAt = 0;
  private retryMs = FIRST_RETRY_MS;
  private timer: NodeJS.Timeout | null = null;
  private linger: NodeJS.Timeout | null = null;
  private stopBus: (() => void) | null = null;

  constructor(readonly options: PostgresqlFeedOptions) {}

  get running(): boolean {
    return this.ready && !this.stopped;
  }

  /** Connects, LISTENs and loads the tail of the ledger; resolves once subscribers can join. */
  start(): Promise<void> {
    this.started ??= (async () => {
      await this.connect();
      this.stopBus = onLedger(() => this.scheduleRead());
      this.timer = setInterval(() => this.scheduleRead(), this.options.pollMs);
      // The feed must never keep a process (a test, the CLI) alive on its own.
      this.timer.unref();
    })();
    return this.started;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.options.url, application_name: FEED_APPLICATION_NAME });
    client.on("error", (error) => this.lost(client, error));
    client.on("end", () => this.lost(client, null));
    client.on("notification", (message) => {
      if (message.channel !== ANNOUNCE_CHANNEL) return;
      // Other parts of this process (the webhook notifier) hear of other instances' writes too.
      announceLedger();
    });
    await client.connect();
    try {
      await client.query(`LISTEN ${ANNOUNCE_CHANNEL}`);
      if (!this.ready) {
        // Only the first time: the tail that a new subscriber may ask to replay.
        const tail = await client.query<FeedRow>(`${EVENT_SELECT} ORDER BY "seq" DESC LIMIT $1`, [this.options.maxReplay]);
        const rows = tail.rows.reverse();
        this.recent = this.options.toDtos(rows);
        this.seq = rows.length ? Number(rows[rows.length - 1]!.seq) : 0;
        this.floor = rows.length === this.options.maxReplay ? Number(rows[0]!.seq) - 1 : 0;
      }
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    this.client = client;
    this.ready = true;
    this.retryMs = FIRST_RETRY_MS;
    // Whatever was committed while connecting (or while disconnected).
    this.scheduleRead();
  }

  private lost(client: pg.Client, error: Error | null): void {
    if (this.client !== client) return;
    this.client = null;
    if (this.stopped) return;
    if (error) console.error(`baton: live feed lost its PostgreSQL connection (${error.message}); reconnecting`);
    this.reconnectLater();
  }

  private reconnectLater(): void {
    const wait = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, this.options.pollMs);
    setTimeout(() => {
      if (this.stopped || this.client) return;
      this.connect().catch(() => this.reconnectLater());
    }, wait).unref();
  }

  stop(): void {
    this.stopped = true;
    this.ready = false;
    if (this.timer) clearInterval(this.timer);
    if (this.batchTimer) clearTimeout(this.batchTimer);
    if (this.linger) clearTimeout(this.linger);
    this.stopBus?.();
    const client = this.client;
    this.client = null;
    void client?.end().catch(() => undefined);
  }

  /**
   * Asks for a read; announcements that arrive before it starts share it, and so do those within
   * the live batch window after the last (`liveBatchWait`).
   */
  scheduleRead(): void {
    if (this.batchTimer) return;
    const wait = this.options.liveBatchWait(this.lastAnnouncedReadAt);
    if (!wait) {
      this.lastAnnouncedReadAt = Date.now();
      void this.catchUp();
      return;
    }
    this.batchTimer = setTimeout(() => {
      this.batchTimer = null;
      this.lastAnnouncedReadAt = Date.now();
      void this.catchUp();
    }, wait);
    this.batchTimer.unref();
  }

  /**
   * Resolves once a read that started after this call has published what it
   * found: everything committed before the call. Reads run one at a time.
   */
  catchUp(): Promise<void> {
    if (this.queued) return this.queued;
    const queued = this.chain.then(() => {
      this.queued = null;
      return this.read().catch((error: unknown) => {
        // A dropped connection is handled by `lost`; the next announcement or tick reads again.
        if (this.client) console.error("baton: live feed: reading the ledger failed", error);
      });
    });
    this.queued = queued;
    this.chain = queued;
    return queued;
  }

  private async read(): Promise<void> {
    for (;;) {
      const client = this.client;
      if (!client || this.stopped) return;
      const result = await client.query<FeedRow>(`${EVENT_SELECT} WHERE "seq" > $1 ORDER BY "seq" LIMIT $2`, [this.seq, this.options.readBatch]);
      const rows = result.rows;
      if (!rows.length) {
        const head = await client.query<{ seq: number | null }>(`SELECT MAX("seq") AS "seq" FROM "LedgerEvent"`);
        const top = Number(head.rows[0]?.seq ?? 0);
        if (top < this.seq) this.reset(top);
        return;
      }
      this.publish(rows);
      if (rows.length < this.options.readBatch) return;
    }
  }

  /** Synchronous from here to the last delivery: a subscriber joining meanwhile sees all of it or none. */
  private publish(rows: FeedRow[]): void {
    const events = this.options.toDtos(rows);
    this.seq = Number(rows[rows.length - 1]!.seq);
    this.recent.push(...events);
    const excess = this.recent.length - this.options.maxReplay;
    if (excess > 0) this.floor = this.recent.splice(0, excess).at(-1)!.seq;
    if (!events.length) return;
    for (const subscriber of [...this.subscribers]) {
      if (this.subscribers.has(subscriber)) this.options.safely("a subscriber", () => subscriber.onEvents(events));
    }
  }

  /** The ledger went backwards: the database was replaced. Everybody refetches. */
  private reset(top: number): void {
    this.seq = top;
    this.recent = [];
    this.floor = top;
    for (const subscriber of [...this.subscribers]) this.options.safely("a subscriber", () => subscriber.onReset?.(top));
  }

  /** Adds a subscriber, replaying from memory what it missed after `afterSeq` (see subscribeLedger). */
  subscribe(afterSeq: number | null, subscriber: FeedSubscriber): () => void {
    if (this.linger) {
      clearTimeout(this.linger);
      this.linger = null;
    }
    if (afterSeq !== null && afterSeq !== this.seq) {
      const missed = this.recent.filter((event) => event.seq > afterSeq);
      if (afterSeq > this.seq || afterSeq < this.floor || missed.length > this.options.maxReplay) subscriber.onReset?.(this.seq);
      else if (missed.length) subscriber.onEvents(missed);
    }
    this.subscribers.add(subscriber);
    return () => {
      if (!this.subscribers.delete(subscriber) || this.subscribers.size) return;
      this.linger = setTimeout(() => {
        if (!this.subscribers.size) this.onIdle();
      }, this.options.lingerMs);
      this.linger.unref();
    };
  }

  /** Replaced by the owner: what to do once nobody listened for `lingerMs`. */
  onIdle: () => void = () => this.stop();
}
