import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { request as playwrightRequest, type APIRequestContext, type Page } from "@playwright/test";
import { createToken, expect, test } from "./support/fixtures";
import { bearer, packetFor, storePacket, threadPath, uniqueId } from "./support/api";
import { column, waitForLive, type ColumnTitle } from "./support/board";
import { freePort, migrateOwnDatabase, ownAdmin, ownToken, startOwnServer, stopOwnServer, type OwnServer } from "./support/own-server";
import { signInApi } from "./support/people";
import { threadHref } from "../lib/views/threads/href";

/**
 * The watchdog: session reports drive the Running column, and silence longer than
 * the stale threshold moves a card to Stale, recorded once as a thread_stale event.
 *
 * Staleness is measured on Baton's clock from the packet's arrival and the session's
 * last report, and the suite's server waits the default 24 h. So the silence part
 * runs against a server of its own (this spec starts it): a fresh database, a stale
 * threshold of STALE_SECONDS and a check every second. Nothing is backdated and no
 * request changes a setting: the card goes stale because nobody reported.
 */

// Long enough to see Running on a busy machine (a heartbeat reaches the open board within
// about a second; if a try does not, the next heartbeat starts the silence again), and short
// enough to wait for: the silence is real time on the server's clock (decision 037).
const STALE_SECONDS = 8;
const CHECK_SECONDS = 1;

type SessionKind = "session_started" | "heartbeat" | "session_ended";

function postEvent(request: APIRequestContext, token: string, key: string, kind: SessionKind, extra: Record<string, unknown> = {}) {
  return request.post(threadPath(key, "/events"), { headers: bearer(token), data: { kind, ...extra } });
}

async function report(request: APIRequestContext, token: string, key: string, kind: SessionKind): Promise<{ column: string | null }> {
  const response = await postEvent(request, token, key, kind, { session_id: `${key}-session` });
  expect(response.status(), await response.text()).toBe(200);
  return (await response.json()) as { column: string | null };
}

const cardIn = (page: Page, title: ColumnTitle, key: string) => column(page, title).locator(`[data-thread-key="${key}"]`);

test("a heartbeat moves a card to Running; an ended session moves it back", async ({ page, request, agentToken }) => {
  const eventsToken = await createToken(`e2e-sessions-${process.pid}`, ["events:write"]);
  const key = uniqueId("running");
  await storePacket(request, agentToken, packetFor(key, { agent: "running-agent" }));
  await page.goto(`/?q=${key}`);
  await waitForLive(page);
  await expect(cardIn(page, "Ready", key)).toBeVisible();

  expect((await report(request, eventsToken, key, "heartbeat")).column).toBe("running");
  await expect(cardIn(page, "Running", key)).toBeVisible();
  await expect(cardIn(page, "Ready", key)).toHaveCount(0);

  expect((await report(request, eventsToken, key, "session_ended")).column).toBe("ready");
  await expect(cardIn(page, "Ready", key)).toBeVisible();
  await expect(cardIn(page, "Running", key)).toHaveCount(0);
});

test("session events need a token with events:write and a thread that has a packet", async ({ request, agentToken }) => {
  const eventsToken = await createToken(`e2e-sessions-${process.pid}`, ["events:write"]);
  const key = uniqueId("no-packet-yet");
  const unknown = await postEvent(request, eventsToken, key, "session_started");
  expect(unknown.status()).toBe(404);
  expect(((await unknown.json()) as { error: { message: string } }).error.message).toMatch(/first packet/);

  await storePacket(request, agentToken, packetFor(key));
  expect((await postEvent(request, agentToken, key, "heartbeat")).status()).toBe(403);
  const bad = await postEvent(request, eventsToken, key, "heartbeat", { at: "soon" });
  expect(bad.status()).toBe(400);
  expect(((await bad.json()) as { error: { details: { fields: { field: string }[] } } }).error.details.fields.map((f) => f.field)).toEqual(["at"]);
});

interface QuickStaleServer extends OwnServer {
  folder: string;
}

const WATCHDOG_ADMIN = { username: "watchdog-admin", password: "watchdog e2e password" };

/** The suite's build, served by a second `next start` with a short stale threshold and a database of its own. */
async function startQuickStaleServer(): Promise<QuickStaleServer> {
  const folder = mkdtempSync(path.join(tmpdir(), "baton-e2e-watchdog-"));
  const databaseUrl = `file:${path.join(folder, "baton.db")}`;
  await migrateOwnDatabase(databaseUrl);
  const server = await startOwnServer({
    databaseUrl,
    port: await freePort(),
    env: { BATON_STALE_HOURS: (STALE_SECONDS / 3600).toString(), BATON_STALE_CHECK_SECONDS: String(CHECK_SECONDS) },
  });
  return { ...server, folder };
}

async function stopQuickStaleServer(server: QuickStaleServer): Promise<void> {
  await stopOwnServer(server);
  rmSync(server.folder, { recursive: true, force: true });
}

test.describe("with a stale threshold of seconds", () => {
  let server: QuickStaleServer | undefined;
  let token = "";

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    server = await startQuickStaleServer();
    const admin = await ownAdmin(server, WATCHDOG_ADMIN);
    token = await ownToken(server, admin, "watchdog-agent", ["packets:write", "packets:read", "events:write"]);
    await admin.dispose();
  });

  test.afterAll(async () => {
    if (server) await stopQuickStaleServer(server);
  });

  test("a heartbeat moves a card to Running and silence moves it to Stale", async ({ browser }) => {
    test.setTimeout(120_000);
    const { baseURL } = server!;
    const api = await playwrightRequest.newContext({ baseURL });
    const context = await browser.newContext({ baseURL, storageState: { cookies: [], origins: [] } });
    try {
      await signInApi(context.request, baseURL, WATCHDOG_ADMIN);
      const page = await context.newPage();
      const key = uniqueId("silence");
      await page.goto(`/?q=${key}`);
      await waitForLive(page);

      await storePacket(api, token, packetFor(key, { agent: "quiet-agent" }));
      // An agent at work reports every couple of seconds, until the board shows it Running.
      let lastReport = 0;
      await expect(async () => {
        expect((await report(api, token, key, "heartbeat")).column).toBe("running");
        lastReport = Date.now();
        await expect(cardIn(page, "Running", key)).toBeVisible({ timeout: 2_000 });
      }).toPass({ timeout: 30_000 });

      // Then silence: no report, no packet. After the threshold the watchdog records the
      // spell and the live board moves the card, with the stale flag and its reason.
      await expect(cardIn(page, "Stale", key)).toBeVisible({ timeout: (STALE_SECONDS + 20) * 1000 });
      expect(Date.now() - lastReport).toBeGreaterThan((STALE_SECONDS - 1) * 1000);
      await expect(cardIn(page, "Running", key)).toHaveCount(0);
      await expect(cardIn(page, "Stale", key).getByText("Stale", { exact: true })).toHaveAttribute("title", /^Nothing new for more than/);

      // One thread_stale event for the spell, however many checks ran since (the thread page's ledger).
      await sleep(3 * CHECK_SECONDS * 1000);
      await page.goto(threadHref(key));
      const ledger = page.getByRole("region", { name: "Ledger" });
      await expect(ledger.getByRole("listitem").filter({ hasText: /heartbeat/ }).first()).toBeVisible();
      await expect(ledger.getByRole("listitem").filter({ hasText: /thread (went )?stale/ })).toHaveCount(1);
    } finally {
      await context.close();
      await api.dispose();
    }
  });
});
