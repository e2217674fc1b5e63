import { expect, test } from "./support/fixtures";
import type { Page } from "@playwright/test";
import { bearer, expectErrorShape, getJson, packetFor, postPacket, storePacket, storePackets, threadPath, uniqueId, type PacketDto } from "./support/api";
import { card, cardsIn, columnCount, COLUMN_TITLES, waitForLive, type ColumnTitle } from "./support/board";
import { createToken } from "./support/fixtures";
import { adminApi, adminCookie, fromPage } from "./support/people";

/** GET /api/v1/stream against the production build (`next start`): server-sent events of the ledger. */

interface SseMessage {
  id?: string;
  event?: string;
  data?: string;
  retry?: string;
  comment?: string;
}

interface LedgerEvent {
  seq: number;
  kind: string;
  thread_key: string | null;
  packet_id: string | null;
}

/** An open stream, read with Node's fetch and a streaming body reader. */
class SseClient {
  readonly messages: SseMessage[] = [];
  private buffer = "";
  private readonly decoder = new TextDecoder();
  /** A read still pending when a wait timed out; the next wait takes it over rather than lose its chunk. */
  private pendingRead: Promise<ReadableStreamReadResult<Uint8Array>> | null = null;

  private constructor(
    readonly response: Response,
    private readonly abort: AbortController,
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>,
  ) {}

  static async open(baseURL: string, headers: Record<string, string>, query = ""): Promise<SseClient> {
    const abort = new AbortController();
    const response = await fetch(`${baseURL}/api/v1/stream${query}`, { headers, signal: abort.signal });
    expect(response.status, response.status === 200 ? "" : await response.clone().text()).toBe(200);
    return new SseClient(response, abort, response.body!.getReader());
  }

  /** The first message (already read or still to come) for which `predicate` holds; fails after `timeoutMs`. */
  async waitFor(predicate: (message: SseMessage) => boolean, timeoutMs: number, what: string): Promise<SseMessage> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages.find(predicate);
      if (found) return found;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${what}: nothing within ${timeoutMs} ms; got ${JSON.stringify(this.messages)}`);
      let timer: NodeJS.Timeout | undefined;
      this.pendingRead ??= this.reader.read();
      const chunk = await Promise.race([
        this.pendingRead,
        new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), left))),
      ]);
      clearTimeout(timer);
      if (chunk === null) continue;
      this.pendingRead = null;
      if (chunk.done) throw new Error(`${what}: the stream ended; got ${JSON.stringify(this.messages)}`);
      this.buffer += this.decoder.decode(chunk.value, { stream: true });
      let end: number;
      while ((end = this.buffer.indexOf("\n\n")) >= 0) {
        this.messages.push(parseMessage(this.buffer.slice(0, end)));
        this.buffer = this.buffer.slice(end + 2);
      }
    }
  }

  ledgerEvents(): LedgerEvent[] {
    return this.messages.filter((m) => m.event === "ledger").map((m) => JSON.parse(m.data!) as LedgerEvent);
  }

  close(): void {
    this.abort.abort();
  }
}

function parseMessage(block: string): SseMessage {
  const message: SseMessage = {};
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) message.comment = line.slice(1).trim();
    const match = /^(id|event|data|retry): ?(.*)$/.exec(line);
    if (match) message[match[1] as "id" | "event" | "data" | "retry"] = match[2];
  }
  return message;
}

const receivedFor = (thread: string) => (m: SseMessage) =>
  m.event === "ledger" && (JSON.parse(m.data!) as LedgerEvent).kind === "packet_received" && JSON.parse(m.data!).thread_key === thread;

test.describe("GET /api/v1/stream", () => {
  test("a posted packet arrives as `event: ledger` within a second", async ({ baseURL, request, agentToken }) => {
    const stream = await SseClient.open(baseURL!, bearer(agentToken));
    try {
      expect(stream.response.headers.get("content-type")).toMatch(/^text\/event-stream/);
      expect(stream.response.headers.get("cache-control")).toBe("no-cache, no-transform");
      expect(stream.response.headers.get("x-accel-buffering")).toBe("no");
      await stream.waitFor((m) => m.event === "ready", 5_000, "ready");
      expect(stream.messages[0]).toEqual({ retry: "2000" });

      const thread = uniqueId("stream-live");
      const response = await postPacket(request, agentToken, packetFor(thread));
      expect(response.status(), await response.text()).toBe(201);
      const { packet_id } = (await response.json()) as { packet_id: string };
      const message = await stream.waitFor(receivedFor(thread), 1_000, `packet_received for ${thread}`);
      const event = JSON.parse(message.data!) as LedgerEvent;
      expect(event.packet_id).toBe(packet_id);
      expect(message.id).toBe(String(event.seq));
    } finally {
      stream.close();
    }
  });

  test("reconnecting with Last-Event-ID replays what was missed, once and in order", async ({ baseURL, request, agentToken }) => {
    const first = await SseClient.open(baseURL!, bearer(agentToken));
    const before = uniqueId("stream-before");
    let lastId: string;
    try {
      await first.waitFor((m) => m.event === "ready", 5_000, "ready");
      expect((await postPacket(request, agentToken, packetFor(before))).status()).toBe(201);
      lastId = (await first.waitFor(receivedFor(before), 1_000, "the first packet")).id!;
    } finally {
      first.close();
    }

    const missed = [uniqueId("stream-missed-1"), uniqueId("stream-missed-2")];
    for (const thread of missed) expect((await postPacket(request, agentToken, packetFor(thread))).status()).toBe(201);

    // ?after=0 as well: the header, which an EventSource's reconnect sends, wins.
    const second = await SseClient.open(baseURL!, { ...bearer(agentToken), "last-event-id": lastId }, "?after=0");
    try {
      await second.waitFor((m) => m.event === "ready", 5_000, "ready");
      const replayed = second.ledgerEvents();
      expect(replayed.length).toBeGreaterThanOrEqual(2);
      const seqs = replayed.map((e) => e.seq);
      expect(Math.min(...seqs)).toBeGreaterThan(Number(lastId));
      expect(seqs).toEqual([...new Set(seqs)].sort((a, b) => a - b));
      expect(replayed.some((e) => e.thread_key === before)).toBe(false);
      const ours = replayed.filter((e) => e.kind === "packet_received" && missed.includes(e.thread_key!));
      expect(ours.map((e) => e.thread_key)).toEqual(missed);

      // Then live again.
      const after = uniqueId("stream-after");
      expect((await postPacket(request, agentToken, packetFor(after))).status()).toBe(201);
      await second.waitFor(receivedFor(after), 1_000, "the packet after reconnecting");
    } finally {
      second.close();
    }
  });

  test("401 without a token or a session (a same-origin header alone is not enough); a signed-in person is let in", async ({ baseURL }) => {
    const response = await fetch(`${baseURL}/api/v1/stream`);
    expect(response.status).toBe(401);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expectErrorShape(await response.json(), "unauthenticated");

    const crossSite = await fetch(`${baseURL}/api/v1/stream`, { headers: { "sec-fetch-site": "cross-site" } });
    expect(crossSite.status).toBe(401);
    await crossSite.body?.cancel();

    const sameOrigin = await fetch(`${baseURL}/api/v1/stream`, { headers: { "sec-fetch-site": "same-origin" } });
    expect(sameOrigin.status).toBe(401);
    await sameOrigin.body?.cancel();

    const signedIn = await SseClient.open(baseURL!, { cookie: await adminCookie() });
    try {
      await signedIn.waitFor((m) => m.event === "ready", 5_000, "ready");
    } finally {
      signedIn.close();
    }
  });

  test("a browser page's EventSource is let in and hears a posted packet", async ({ page, request, agentToken }) => {
    // A page of the app: API answers are sandboxed documents that may connect nowhere (decision 022).
    await page.goto("/lessons");
    const thread = uniqueId("stream-browser");
    await page.evaluate(() => {
      const events: string[] = [];
      (window as unknown as { streamEvents: string[] }).streamEvents = events;
      const source = new EventSource("/api/v1/stream");
      source.addEventListener("ready", () => events.push("ready"));
      source.addEventListener("ledger", (message) => events.push(message.data));
    });
    await expect.poll(() => page.evaluate(() => (window as unknown as { streamEvents: string[] }).streamEvents[0])).toBe("ready");
    expect((await postPacket(request, agentToken, packetFor(thread))).status()).toBe(201);
    await expect
      .poll(() => page.evaluate((key) => (window as unknown as { streamEvents: string[] }).streamEvents.some((d) => d.includes(key)), thread), {
        timeout: 1_000,
      })
      .toBe(true);
  });

  test("400 for a malformed cursor", async ({ baseURL, agentToken }) => {
    for (const after of ["abc", "-5", "1.5", ""]) {
      const response = await fetch(`${baseURL}/api/v1/stream?after=${after}`, { headers: bearer(agentToken) });
      expect(response.status, `after=${after}`).toBe(400);
      expect(response.headers.get("content-type")).toMatch(/^application\/json/);
      const error = expectErrorShape(await response.json(), "invalid_request");
      expect(error.message).toMatch(/after/);
    }
    const badHeader = await fetch(`${baseURL}/api/v1/stream`, { headers: { ...bearer(agentToken), "last-event-id": "nope" } });
    expect(badHeader.status).toBe(400);
    expectErrorShape(await badHeader.json(), "invalid_request");
  });
});

/** Counts the page's requests for `path` (a view's data) from the moment `counting.on` turns true. */
function countFetches(page: Page, counting: { on: boolean }, path = "/api/v1/board"): { count: number } {
  const fetches = { count: 0 };
  page.on("request", (request) => {
    if (counting.on && new URL(request.url()).pathname === path) fetches.count++;
  });
  return fetches;
}

test("two boards open: a packet, a risk acknowledgement, an approval and a heartbeat each move the card on both from the stream's deltas, with no board refetch; after the stream is cut and restored both match a fresh load", async ({
  page,
  request,
  agentToken,
  baseURL,
}) => {
  const run = uniqueId("delta-run");
  const key = `${run}-card`;
  // A peer in the same project and branch: its card must come through the cut unchanged.
  const peer = `${run}-peer`;
  await storePackets(request, agentToken, [
    packetFor(key, { open_risks: [], next_action: `first step of ${key}` }),
    packetFor(peer, { open_risks: [], next_action: `first step of ${peer}` }),
  ]);
  const eventsToken = await createToken(`e2e-delta-sessions-${process.pid}`, ["events:write"]);
  const admin = await adminApi(baseURL!);
  await page.context().addInitScript(keepStreams);
  const second = await page.context().newPage();
  const boards = [page, second];
  const counting = { on: false };
  const fetches = boards.map((board) => countFetches(board, counting));
  for (const board of boards) {
    await board.goto(`/?q=${encodeURIComponent(run)}`);
    await waitForLive(board);
    await expect(cardsIn(board, "Ready").filter({ hasText: `first step of ${key}` })).toHaveCount(1);
  }
  const onBoth = async (title: ColumnTitle, text: string) => {
    for (const board of boards) await expect(cardsIn(board, title).filter({ hasText: text }), `${title}: ${text}`).toHaveCount(1, { timeout: 5_000 });
  };
  counting.on = true;

  // A packet: a critical risk puts the card in front of a person.
  const risky = await storePacket(request, agentToken, packetFor(key, { open_risks: [{ severity: "critical", detail: "seen live" }], next_action: `second step of ${key}` }));
  await onBoth("Needs you", `second step of ${key}`);
  // A risk acknowledgement: nothing needs the person any more.
  const packet = await getJson<PacketDto>(request, agentToken, `/api/v1/packets/${risky.packet_id}`);
  const fingerprint = packet.canonical.open_risks![0]!.fingerprint;
  const triage = await admin.post("/api/v1/risks/triage", { headers: fromPage(baseURL!), data: { action: "acknowledged", targets: [{ thread_key: key, fingerprint }] } });
  expect(triage.status(), await triage.text()).toBe(200);
  await onBoth("Ready", `second step of ${key}`);
  // An approval.
  const approval = await admin.post(threadPath(key, "/decision"), { headers: fromPage(baseURL!), data: { kind: "approved", packet_id: risky.packet_id, base_revision: 0 } });
  expect(approval.status(), await approval.text()).toBe(200);
  await onBoth("Approved", `second step of ${key}`);
  // A heartbeat: a session is at work on it.
  const heartbeat = await request.post(threadPath(key, "/events"), { headers: bearer(eventsToken), data: { kind: "heartbeat", session_id: `${key}-session` } });
  expect(heartbeat.status(), await heartbeat.text()).toBe(200);
  await onBoth("Running", `second step of ${key}`);
  for (const board of boards) await expect(card(board, key)).toHaveCount(1);
  expect(fetches.map((each) => each.count)).toEqual([0, 0]);

  // The stream is cut (the connection drops and the pages lose the network), the ledger moves on meanwhile, and the network comes back.
  await page.context().setOffline(true);
  for (const board of boards) await board.evaluate(dropStreams);
  for (const board of boards) await expect(board.getByRole("status").filter({ hasText: /threads? ·/ })).not.toContainText("live", { timeout: 10_000 });
  const ended = await request.post(threadPath(key, "/events"), { headers: bearer(eventsToken), data: { kind: "session_ended", session_id: `${key}-session` } });
  expect(ended.status(), await ended.text()).toBe(200);
  await storePacket(request, agentToken, packetFor(key, { open_risks: [{ severity: "high", detail: "while cut" }], next_action: `third step of ${key}` }));
  await page.context().setOffline(false);
  for (const board of boards) await expect(cardsIn(board, "Needs you").filter({ hasText: `third step of ${key}` })).toHaveCount(1, { timeout: 15_000 });
  for (const board of boards) await waitForLive(board);

  const fresh = await page.context().newPage();
  await fresh.goto(`/?q=${encodeURIComponent(run)}`);
  await waitForLive(fresh);
  const expected = await boardShown(fresh);
  expect(expected.find((column) => column.title === "Needs you")?.cards.map((shown) => shown.key)).toEqual([key]);
  for (const board of boards) expect(await boardShown(board)).toEqual(expected);
  await Promise.all([fresh.close(), second.close(), admin.dispose()]);
});

/**
 * Browser side: every EventSource the page opens is kept in `window.batonStreams`, so the test can
 * drop a live connection (Playwright's offline mode fails new requests but leaves an open stream be).
 */
function keepStreams(): void {
  const Native = window.EventSource;
  const kept: EventSource[] = [];
  Object.assign(window, { batonStreams: kept });
  window.EventSource = class extends Native {
    constructor(url: string | URL, init?: EventSourceInit) {
      super(url, init);
      kept.push(this);
    }
  };
}

/** Browser side: closes the open streams and tells their owner, as a dropped connection would. */
function dropStreams(): void {
  for (const source of (window as unknown as { batonStreams: EventSource[] }).batonStreams) {
    if (source.readyState === EventSource.CLOSED) continue;
    source.close();
    source.onerror?.(new Event("error"));
  }
}

/** What a board shows, column by column: each column's count and its cards' keys and text (times left out: they tick). */
async function boardShown(page: Page): Promise<{ title: ColumnTitle; count: number; cards: { key: string; text: string }[] }[]> {
  const shown = [];
  for (const title of COLUMN_TITLES) {
    const cards = await cardsIn(page, title).evaluateAll((elements) =>
      elements.map((element) => {
        const copy = element.cloneNode(true) as HTMLElement;
        for (const time of copy.querySelectorAll("time")) time.remove();
        return { key: element.getAttribute("data-thread-key") ?? "", text: copy.innerText.replace(/\s+/g, " ").trim() };
      }),
    );
    shown.push({ title, count: await columnCount(page, title), cards });
  }
  return shown;
}

test("the questions inbox shows a new question from the stream's delta, with no inbox refetch", async ({ page, request, agentToken }) => {
  const thread = uniqueId("delta-question");
  const counting = { on: false };
  const fetches = countFetches(page, counting, "/api/v1/questions");
  await page.goto("/questions");
  await expect(page.getByText("live", { exact: true })).toBeVisible({ timeout: 10_000 });
  counting.on = true;
  await storePacket(request, agentToken, packetFor(thread, { questions_for_human: [`Is ${thread} ready to merge?`] }));
  await expect(page.getByRole("list", { name: "Unanswered questions" }).getByText(`Is ${thread} ready to merge?`)).toBeVisible({ timeout: 5_000 });
  expect(fetches.count).toBe(0);
});
