/**
 * The viewers of bench:viewers, in a process of their own so that their work is not counted as
 * the server's. Each viewer behaves as the board page does over HTTP: it follows
 * GET /api/v1/stream and, in "refetch" mode, fetches GET /api/v1/board when a ledger event
 * arrives (with If-None-Match, as the page does); in "delta" mode it asks the stream for board
 * deltas (`?board=`) and reads the changed card from them. Driven over IPC by bench/viewers.ts.
 */

export type ViewerMode = "refetch" | "delta";

export type ToViewers =
  | { type: "open"; base: string; tokens: string[]; mode: ViewerMode }
  | { type: "expect"; key: string; nextAction: string }
  | { type: "report" }
  | { type: "close" };

export type FromViewers =
  /** Done: the viewers are open (after `open`), expecting (after `expect`), closed (after `close`). */
  | { type: "done" }
  | { type: "seen"; /** Per viewer: the wall clock (ms) when its board showed the next action, or null if it never did. */ at: (number | null)[]; /** Per viewer: bytes received since the last `expect`. */ bytes: number[] };

const wallClock = () => performance.timeOrigin + performance.now();

interface Expected {
  key: string;
  nextAction: string;
}

class Viewer {
  bytes = 0;
  seenAt: number | null = null;
  expected: Expected | null = null;
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

  private shows(text: string): boolean {
    return this.expected !== null && text.includes(JSON.stringify(this.expected.nextAction));
  }

  private readDelta(data: string): void {
    if (this.seenAt !== null || !this.expected) return;
    const delta = JSON.parse(data) as { upserts: { key: string; active_packet: { next_action: string | null } }[] };
    const card = delta.upserts.find((each) => each.key === this.expected!.key);
    if (card?.active_packet.next_action === this.expected.nextAction) this.seenAt = wallClock();
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
          if (this.seenAt === null && this.shows(text)) this.seenAt = wallClock();
        }
      } while (this.refetchAgain);
    })().finally(() => (this.fetching = null));
  }

  close(): void {
    this.abort.abort();
  }
}

let viewers: Viewer[] = [];
const reply = (message: FromViewers) => process.send!(message);

process.on("message", (message: ToViewers) => {
  void (async () => {
    if (message.type === "open") {
      viewers = message.tokens.map((token) => new Viewer(message.base, token, message.mode));
      for (const viewer of viewers) viewer.open();
      await Promise.all(viewers.map((viewer) => viewer.ready));
      reply({ type: "done" });
    } else if (message.type === "expect") {
      for (const viewer of viewers) Object.assign(viewer, { expected: { key: message.key, nextAction: message.nextAction }, seenAt: null, bytes: 0 });
      reply({ type: "done" });
    } else if (message.type === "report") {
      reply({ type: "seen", at: viewers.map((viewer) => viewer.seenAt), bytes: viewers.map((viewer) => viewer.bytes) });
    } else {
      for (const viewer of viewers) viewer.close();
      viewers = [];
      reply({ type: "done" });
    }
  })().catch((error: unknown) => {
    console.error("bench viewers:", error);
    process.exit(1);
  });
});
