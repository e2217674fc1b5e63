/**
 * The viewers of bench:viewers, in a process of their own so that their work is not counted as
 * the server's. Each viewer behaves as the board page does over HTTP: it follows
 * GET /api/v1/stream and, in "refetch" mode, fetches GET /api/v1/board when a ledger event
 * arrives (with If-None-Match, as the page does); in "delta" mode it asks the stream for board
 * deltas (`?board=`) and reads the changed cards from them. Each viewer notes when its board
 * first shows each watched next_action. Driven over IPC by bench/viewers.ts; the sustained
 * load (packets and heartbeats sent open-loop) is sent from here too (./sustained-load.ts).
 */
import { runSustainedLoad, type LoadRequest, type LoadResult } from "./sustained-load";
import { BrowserViewer, closeBrowser, type BrowserViewerPlan } from "./browser-viewers";

export type ViewerMode = "refetch" | "delta";

export type ToViewers =
  | { type: "open"; viewers: { base: string; token: string }[]; mode: ViewerMode; browsers: BrowserViewerPlan[]; browserKeys: string[] }
  | { type: "expect"; key: string; nextAction: string }
  | { type: "report" }
  | ({ type: "load" } & LoadRequest)
  | { type: "close" };

export type FromViewers =
  /** Done: the viewers are open (after `open`), expecting (after `expect`), closed (after `close`). */
  | { type: "done"; /** After `open`: the cards each Chromium viewer's board showed. */ browserCards?: number[] }
  | { type: "seen"; /** Per viewer: the wall clock (ms) when its board showed the next action, or null if it never did. */ at: (number | null)[]; /** Per viewer: bytes received since the last `expect`. */ bytes: number[] }
  | ({ type: "loaded" } & LoadResult);

export const wallClock = () => performance.timeOrigin + performance.now();

/** The next actions the viewers look for, each with its thread's key. */
export const watched = new Map<string, string>();

export class Viewer {
  readonly kind = "http";
  bytes = 0;
  /** Watched next action -> the wall clock when this board first showed it. */
  readonly seen = new Map<string, number>();
  private etag: string | null = null;
  private fetching: Promise<void> | null = null;
  private refetchAgain = false;
  private readonly abort = new AbortController();
  ready!: Promise<void>;

  constructor(
    private readonly base: string,
    private readonly token: string,
    private readonly mode: ViewerMode,
  ) {}

  wants(): boolean {
    return true;
  }

  open(): void {
    this.ready = new Promise((resolve, reject) => void this.follow(resolve).catch(reject));
  }

  private async follow(onReady: () => void): Promise<void> {
    const query = this.mode === "delta" ? "?board=" : "";
    const response = await fetch(`${this.base}/api/v1/stream${query}`, { headers: { authorization: `Bearer ${this.token}` }, signal: this.abort.signal });
    if (response.status !== 200) throw new Error(`stream: HTTP ${response.status}: ${await response.text()}`);
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        this.bytes += chunk.byteLength;
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (\w+)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1] ?? "";
          if (event === "ready") onReady();
          else if (event === "ledger" && this.mode === "refetch") this.refetch();
          else if (event === "delta") this.readDelta(data);
        }
      }
    } catch (error) {
      if (!this.abort.signal.aborted) throw error;
    }
  }

  private readDelta(data: string): void {
    if (watched.size === 0) return;
    const delta = JSON.parse(data) as { upserts: { key: string; active_packet: { next_action: string | null } }[] };
    const at = wallClock();
    for (const card of delta.upserts) {
      const nextAction = card.active_packet.next_action;
      if (nextAction !== null && watched.get(nextAction) === card.key && !this.seen.has(nextAction)) this.seen.set(nextAction, at);
    }
  }

  /** As the page's throttled refresh: one fetch at a time, the last event always followed. */
  private refetch(): void {
    if (this.fetching) {
      this.refetchAgain = true;
      return;
    }
    this.fetching = (async () => {
      do {
        this.refetchAgain = false;
        const response = await fetch(`${this.base}/api/v1/board`, {
          headers: { authorization: `Bearer ${this.token}`, accept: "application/json", ...(this.etag ? { "if-none-match": this.etag } : {}) },
        });
        const text = await response.text();
        this.bytes += Buffer.byteLength(text);
        if (response.status === 200) {
          this.etag = response.headers.get("etag");
          const at = wallClock();
          for (const nextAction of watched.keys()) if (!this.seen.has(nextAction) && text.includes(JSON.stringify(nextAction))) this.seen.set(nextAction, at);
        }
      } while (this.refetchAgain);
    })().finally(() => (this.fetching = null));
  }

  close(): void {
    this.abort.abort();
  }
}

let viewers: Viewer[] = [];
let browserViewers: BrowserViewer[] = [];
let expected: string | null = null;
const reply = (message: FromViewers) => process.send!(message);

process.on("message", (message: ToViewers) => {
  void (async () => {
    if (message.type === "open") {
      viewers = message.viewers.map(({ base, token }) => new Viewer(base, token, message.mode));
      for (const viewer of viewers) viewer.open();
      await Promise.all(viewers.map((viewer) => viewer.ready));
      browserViewers = message.browsers.map((plan) => new BrowserViewer(plan, new Set(message.browserKeys), watched));
      for (const viewer of browserViewers) await viewer.open();
      reply({ type: "done", browserCards: browserViewers.map((viewer) => viewer.cards) });
    } else if (message.type === "expect") {
      watched.clear();
      watched.set(message.nextAction, message.key);
      expected = message.nextAction;
      for (const viewer of viewers) Object.assign(viewer, { bytes: 0 }).seen.clear();
      reply({ type: "done" });
    } else if (message.type === "report") {
      reply({ type: "seen", at: viewers.map((viewer) => viewer.seen.get(expected ?? "") ?? null), bytes: viewers.map((viewer) => viewer.bytes) });
    } else if (message.type === "load") {
      reply({ type: "loaded", ...(await runSustainedLoad(message, [...viewers, ...browserViewers], watched)) });
    } else {
      for (const viewer of viewers) viewer.close();
      for (const viewer of browserViewers) await viewer.close();
      if (browserViewers.length) await closeBrowser();
      viewers = [];
      browserViewers = [];
      watched.clear();
      reply({ type: "done" });
    }
  })().catch((error: unknown) => {
    console.error("bench viewers:", error);
    process.exit(1);
  });
});
