import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { APIRequestContext, BrowserContext, Page } from "@playwright/test";
import { recordFigure } from "../testing/reliability";
import { createToken, expect, test as baseTest } from "./support/fixtures";
import { bearer, findThread, storePacket, storePackets, uniqueId, type IngestResult } from "./support/api";
import { EVIL_HOST, HOSTILE_FIELDS, hostilePacket, LONG_PAYLOAD, PATH_PAYLOADS, XSS_PAYLOADS } from "./support/hostile-corpus";
import {
  expectNothingRan,
  expectStrictPolicies,
  findPayloadTraces,
  requestsBlockedByPolicy,
  requestsThatLeft,
  watchContext,
  type Observations,
} from "./support/hostile-watch";
import { contextAs, createPerson } from "./support/people";
import { visibleText } from "../lib/contract/invisible";

/**
 * Hostile content (issue 8, item 5): XSS payloads in every agent-provided field,
 * ingested through the real API and the watched folder, shown on every page.
 * Nothing may run, open a dialog, or fetch from another host; every document
 * carries a Content-Security-Policy without inline scripts (decision 022).
 */

const SECTION = "hostile-content";
const INGEST_TIMEOUT_MS = 10_000;
const threadUrl = (key: string) => `/threads/${encodeURIComponent(key)}`;

/** Writes a workspace with hostile verification and review reports, and its handoff.json, under the watched folder. */
async function writeWatchedWorkspace(request: APIRequestContext, token: string, watchDir: string, key: string): Promise<void> {
  const workspace = path.join(watchDir, uniqueId("hostile-ws"));
  const findings = XSS_PAYLOADS.map((payload, index) => ({ code: payload, severity: ["high", "low", payload][index % 3], detail: payload }));
  const dimensions = XSS_PAYLOADS.map((payload) => ({ name: payload, score: 1, note: payload }));
  await mkdir(path.join(workspace, "outputs", "verification"), { recursive: true });
  await mkdir(path.join(workspace, "outputs", "review"), { recursive: true });
  await writeFile(path.join(workspace, "outputs", "verification", "T-1.json"), JSON.stringify({ task_id: "T-1", passed: false, findings }));
  await writeFile(path.join(workspace, "outputs", "review", "T-1.json"), JSON.stringify({ task_id: "T-1", total: 4, verdict: "soft_fail", dimensions }));
  const folder = path.join(workspace, "outputs", "handoff", uniqueId("sess"));
  await mkdir(folder, { recursive: true });
  const packet = { ...hostilePacket(key, XSS_PAYLOADS), verdict_pointer: { verdict: "outputs/verification/T-1.json", review: "outputs/review/T-1.json" } };
  await writeFile(path.join(folder, "handoff.json"), JSON.stringify(packet));
  await expect.poll(async () => (await findThread(request, token, key)) !== null, { timeout: INGEST_TIMEOUT_MS }).toBe(true);
  // A file that is not a packet, in folders named like markup: its path is shown on the board.
  const bad = path.join(watchDir, uniqueId("hostile-bad"), ...PATH_PAYLOADS);
  await mkdir(bad, { recursive: true });
  await writeFile(path.join(bad, "handoff.json"), JSON.stringify({ [XSS_PAYLOADS[0]!]: "not a packet" }));
}

/** Opens a page and checks that no payload left a trace, before and after `ready` (waits, interactions). */
async function visit(page: Page, url: string, visited: string[], ready?: (page: Page) => Promise<void>): Promise<void> {
  const response = await page.goto(url);
  expect(response?.status(), url).toBeLessThan(500);
  // Loaded: the server-rendered page is all there (not "networkidle": a live page keeps its
  // event stream open, so the network is never idle).
  await expectNothingRan(page, url);
  if (ready) {
    // Then again once the page is live, or the keyboard and the mouse revealed more.
    await ready(page);
    await expectNothingRan(page, `${url}, after`);
  }
  visited.push(url);
}

const live = (page: Page) => expect(page.getByText(/\blive\b/).first()).toBeVisible({ timeout: INGEST_TIMEOUT_MS });
const showsText = (text: string) => async (page: Page) => expect(page.locator("main")).toContainText(text);

function expectNothingHappened(seen: Observations): void {
  expect(seen.dialogs, "dialogs opened").toEqual([]);
  // Not even one the policy would have stopped: the pages never ask for an agent's URL.
  expect(seen.outsideRequests.map((request) => request.url()), "requests to other hosts").toEqual([]);
  expect(seen.cspViolations, "Content-Security-Policy violations").toEqual([]);
  expect(seen.popups, "windows opened").toEqual([]);
  expectStrictPolicies(seen);
}

/** The threads the suite ingests, shared by its tests (serial: each needs the ingest). */
interface Ingested {
  run: string;
  everything: string;
  v1: IngestResult;
  v2: IngestResult;
  perPayload: string[];
  long: string;
  watched: string;
}
let ingested: Ingested;
const visited: string[] = [];
const observations: Observations[] = [];

/** Watches a browser context; what it saw is checked when the test ends, and counted in the figures. */
async function watchAndCheck(context: BrowserContext, baseURL: string): Promise<Observations> {
  const seen = await watchContext(context, new URL(baseURL).origin);
  observations.push(seen);
  return seen;
}

/** Every test's own page is watched from the start, and checked at its end. */
const test = baseTest.extend<{ observed: Observations }>({
  observed: [
    async ({ page, baseURL }, use) => {
      const seen = await watchAndCheck(page.context(), baseURL!);
      await use(seen);
      expectNothingHappened(seen);
    },
    { auto: true },
  ],
});

test.describe("XSS payloads in every agent-provided field, on every page: nothing runs, opens or leaves", () => {
  // Each test needs the ingest; after a failure the rest are skipped.
  test.describe.configure({ mode: "serial" });

  test("ingested over HTTP and from a watched folder", async ({ request, agentToken, watchDir }) => {
    const run = uniqueId("hostile");
    // One thread with every payload in every field (two versions, for the diff), one thread
    // per payload (its key hostile too), one with a very long payload, one watched.
    const everything = `${run} every field`;
    const v1 = await storePacket(request, agentToken, { ...hostilePacket(everything, XSS_PAYLOADS.slice(0, 12)), created_at: new Date(Date.now() - 60_000).toISOString() });
    const v2 = await storePacket(request, agentToken, hostilePacket(everything, XSS_PAYLOADS));
    // The rest in one batch request: the same ingest per packet, one commit instead of 36.
    const seeded = await storePackets(request, agentToken, [
      ...XSS_PAYLOADS.map((payload, index) => hostilePacket(`${run}-${index} ${payload}`, [payload])),
      hostilePacket(`${run} long`, [LONG_PAYLOAD]),
    ]);
    const perPayload = seeded.slice(0, XSS_PAYLOADS.length).map((result) => result.thread_key);
    const long = seeded.at(-1)!.thread_key;
    const watched = `${run} watched`;
    await writeWatchedWorkspace(request, agentToken, watchDir, watched);
    await createToken(`${PATH_PAYLOADS[0]} ${run}`.slice(0, 100), ["packets:read"]);
    ingested = { run, everything, v1, v2, perPayload, long, watched };
  });

  test("the board, filtered and not, with the keyboard", async ({ page }) => {
    await visit(page, `/?q=${encodeURIComponent(ingested.run)}`, visited, async (board) => {
      await live(board);
      await expect(board.getByTestId("board-card").filter({ hasText: XSS_PAYLOADS[0]! }).first()).toBeVisible();
      await board.getByTestId("board-card").first().hover();
      await board.keyboard.press("j");
      await board.keyboard.press("l");
    });
    await expect
      .poll(async () => {
        await visit(page, "/", visited);
        const region = page.getByRole("region", { name: "Files that could not be ingested" });
        // count() does not wait: the region appears once the watcher has refused the file.
        return (await region.count()) ? region.textContent() : "";
      }, { timeout: INGEST_TIMEOUT_MS })
      .toContain(PATH_PAYLOADS[1]!);
  });

  test("the thread with every payload: people's answers, the diff, an older version", async ({ page, request, agentToken }) => {
    const { everything, v1, v2 } = ingested;
    await visit(page, threadUrl(everything), visited, showsText(XSS_PAYLOADS[0]!));
    // People's text is shown like the agent's: an intervention and an answer with payloads.
    await page.getByRole("button", { name: /^Intervene on / }).click();
    await page.getByRole("textbox", { name: /^Instructions for the next session/ }).fill(XSS_PAYLOADS[1]!);
    await page.keyboard.press("Enter");
    await expect.poll(async () => (await findThread(request, agentToken, everything))!.human.questions.map((question) => question.text)).toEqual([XSS_PAYLOADS[1]]);
    await page.reload();
    const answer = page.getByRole("textbox", { name: /^Answer: / }).first();
    await answer.fill(XSS_PAYLOADS[2]!);
    await answer.press("Control+Enter");
    await expect.poll(async () => (await findThread(request, agentToken, everything))!.human.answers.map((entry) => entry.answer)).toEqual([XSS_PAYLOADS[2]]);
    await visit(page, threadUrl(everything), visited, async (thread) => {
      await expect(thread.getByRole("region", { name: "People" })).toContainText(XSS_PAYLOADS[1]!);
    });
    await visit(page, `${threadUrl(everything)}?from=${v1.packet_id}&to=${v2.packet_id}`, visited, async (diff) => {
      await expect(diff.getByRole("region", { name: "Differences" })).toContainText(XSS_PAYLOADS[20]!);
    });
    await visit(page, `${threadUrl(everything)}?to=${v1.packet_id}`, visited);
  });

  test("a thread per payload (keys hostile too), the very long one, verdict reports, an unknown thread", async ({ page }) => {
    test.setTimeout(240_000);
    const { run, perPayload, long, watched } = ingested;
    // Invisible characters show as markers (decision 034): the page's text is the payload's visible form.
    for (const [index, key] of perPayload.entries()) await visit(page, threadUrl(key), visited, showsText(visibleText(XSS_PAYLOADS[index]!).split(/\s/)[0]!));
    await visit(page, threadUrl(long), visited, showsText("<script>window.__xss=99</script>"));
    await visit(page, threadUrl(watched), visited, async (thread) => {
      await expect(thread.getByRole("region", { name: "Verdict" })).toContainText(XSS_PAYLOADS[3]!);
    });
    // No such thread: the not-found page (Next's own would bring an inline <style>).
    await visit(page, threadUrl(`${run} ${XSS_PAYLOADS[0]}`), visited, showsText("This page could not be found."));
  });

  test("risks, timeline (hover and focus), lessons, and the questions inbox answered with the keyboard", async ({ page, request, agentToken }) => {
    const { run, perPayload } = ingested;
    await visit(page, `/risks?q=${encodeURIComponent(run)}`, visited, async (risks) => {
      await live(risks);
      await expect(risks.getByTestId("risk-group").filter({ hasText: XSS_PAYLOADS[4]! }).first()).toBeVisible();
      await risks.keyboard.press("j");
    });
    await visit(page, `/timeline?q=${encodeURIComponent(run)}`, visited, async (timeline) => {
      await live(timeline);
      const markers = timeline.getByRole("link", { name: /^Version \d+ of / });
      await markers.first().hover();
      await expect(timeline.getByRole("tooltip")).toContainText(run);
      // The pointer leaves first: a hovered marker keeps its tooltip open beside the focused one's.
      await timeline.mouse.move(0, 0);
      await expect(timeline.getByRole("tooltip")).toHaveCount(0);
      await markers.last().focus();
      await expect(timeline.getByRole("tooltip")).toContainText(run);
      await expectNothingRan(timeline, "timeline tooltip");
    });
    await visit(page, `/lessons?q=${encodeURIComponent(run)}`, visited, showsText(XSS_PAYLOADS[5]!));
    await visit(page, "/questions", visited, async (inbox) => {
      await live(inbox);
      // The group of payload 6's own thread (the everything thread's agent name holds every payload).
      const group = inbox.getByTestId("question-group").filter({ has: inbox.getByRole("link", { name: perPayload[6]!, exact: true }) });
      await group.focus();
      await inbox.keyboard.press("Enter");
      const askedBy = await group.getByText(/^asked by \d+ threads?$/).textContent();
      await inbox.keyboard.type(XSS_PAYLOADS[7]!);
      await inbox.keyboard.press("Control+Enter");
      // One answer for several threads asks once, naming how many; Enter confirms.
      if (askedBy !== "asked by 1 thread") {
        await expect(group.getByRole("button", { name: /^Yes, send to \d+ threads$/ })).toBeFocused();
        await inbox.keyboard.press("Enter");
      }
      await expect(group).toHaveCount(0);
    });
    await expect.poll(async () => (await findThread(request, agentToken, perPayload[6]!))!.human.answers.map((entry) => entry.answer)).toEqual([XSS_PAYLOADS[7]]);
  });

  test("the admin pages", async ({ page }) => {
    await visit(page, "/admin/users", visited);
    await visit(page, "/admin/tokens", visited, showsText(PATH_PAYLOADS[0]!));
    await visit(page, "/admin/webhooks", visited);
  });

  test("downloads and the markdown API: attachments or plain text, never a document that runs", async ({ page, agentToken }) => {
    for (const suffix of ["/handoff.json", "/handoff.md"]) {
      const url = `${threadUrl(ingested.everything)}${suffix}`;
      const response = await page.request.get(url);
      expect(response.status()).toBe(200);
      expect(response.headers()["content-disposition"]).toMatch(/^attachment;/);
      expect(response.headers()["x-content-type-options"]).toBe("nosniff");
      expect(response.headers()["content-security-policy"]).toContain("sandbox");
      const [download] = await Promise.all([page.waitForEvent("download"), page.goto(url).catch(() => null)]);
      expect(download.suggestedFilename()).toBe(`handoff${path.extname(suffix)}`);
      visited.push(url);
    }
    const markdown = `/api/v1/packets/${encodeURIComponent(ingested.v2.packet_id)}/markdown`;
    const response = await page.request.get(markdown, { headers: bearer(agentToken) });
    expect(response.headers()["content-type"]).toBe("text/markdown; charset=utf-8");
    expect(response.headers()["x-content-type-options"]).toBe("nosniff");
    expect(response.headers()["content-security-policy"]).toContain("sandbox");
    // Chromium shows text/markdown as plain text (another browser may download it).
    const shown = await page.goto(markdown).catch(() => null);
    if (shown) {
      expect(await page.evaluate(() => document.contentType)).not.toBe("text/html");
      expect(await findPayloadTraces(page)).toEqual([]);
      visited.push(markdown);
    }
  });

  test("redirects, static files and their 404s carry the strict policy too", async ({ playwright, baseURL }) => {
    const anonymous = await playwright.request.newContext({ baseURL, storageState: { cookies: [], origins: [] } });
    try {
      const redirect = await anonymous.get("/risks", { maxRedirects: 0 });
      expect(redirect.status()).toBe(307);
      expect(redirect.headers()["content-security-policy"]).toContain("default-src 'none'");
      for (const file of ["/favicon.ico", "/icon.svg"]) {
        const response = await anonymous.get(file);
        expect(response.headers()["content-security-policy"], file).toContain("default-src 'none'");
        expect(response.headers()["x-content-type-options"], file).toBe("nosniff");
      }
    } finally {
      await anonymous.dispose();
    }
  });

  test("sign-in and first-run signed out, with a hostile next address; a viewer's board", async ({ browser, baseURL }) => {
    const person = await createPerson(baseURL!, "viewer");
    const anonymous = await browser.newContext({ baseURL, storageState: { cookies: [], origins: [] } });
    const seenAnonymous = await watchAndCheck(anonymous, baseURL!);
    const signIn = await anonymous.newPage();
    await visit(signIn, "/setup", visited); // closed once an admin exists: it sends people to sign in
    await expect(signIn).toHaveURL(/\/sign-in/);
    await visit(signIn, `/sign-in?next=${encodeURIComponent("javascript:window.__xss=1")}`, visited);
    await signIn.getByLabel("Username").fill(person.username);
    await signIn.getByLabel("Password").fill(person.password);
    await signIn.getByRole("button", { name: "Sign in" }).click();
    await expect(signIn).toHaveURL(`${new URL(baseURL!).origin}/`);
    await expectNothingRan(signIn, "after sign-in");
    await anonymous.close();
    expectNothingHappened(seenAnonymous);
    // A viewer (no action buttons) sees the same cards, just as inert.
    const viewer = await contextAs(browser, baseURL!, person);
    const seenViewer = await watchAndCheck(viewer, baseURL!);
    await visit(await viewer.newPage(), `/?q=${encodeURIComponent(ingested.run)}`, visited, showsText(XSS_PAYLOADS[0]!));
    await viewer.close();
    expectNothingHappened(seenViewer);
  });

  test("in all: no dialog, no request to another host, no violation, a strict policy on every document", ({ baseURL }) => {
    const all = (pick: (seen: Observations) => unknown[]) => observations.flatMap(pick);
    const documents = all((seen) => seen.documents);
    expect(documents.length).toBeGreaterThanOrEqual(visited.length);
    expect(all((seen) => seen.dialogs)).toEqual([]);
    expect(all((seen) => seen.outsideRequests)).toEqual([]);
    expect(all((seen) => seen.cspViolations)).toEqual([]);
    const origin = new URL(baseURL!).origin;
    const pages = new Set(visited.map((url) => new URL(url, origin).pathname.replace(/^\/threads\/[^/]+/, "/threads/<key>").replace(/\/packets\/[^/]+/, "/packets/<id>")));
    recordFigure(SECTION, "payloads", XSS_PAYLOADS.length + 1 + PATH_PAYLOADS.length, "script, img onerror, svg onload, javascript: and data: URLs, markdown links and images, template injection, iframes, styles, RTL and zero-width, one of 24 KB...");
    recordFigure(SECTION, "fields carrying them", HOSTILE_FIELDS.length, "every agent-provided field of the contract, unknown fields, report contents and a watched file's path");
    recordFigure(SECTION, "page visits", visited.length, `${pages.size} different pages: ${[...pages].sort().join(", ")}`);
    recordFigure(SECTION, "documents checked for a policy", documents.length, "each with a Content-Security-Policy; no 'unsafe-inline' or 'unsafe-eval' for scripts");
    recordFigure(SECTION, "dialogs opened", all((seen) => seen.dialogs).length, "must be 0");
    recordFigure(SECTION, "requests to other hosts", all((seen) => seen.outsideRequests).length, `must be 0 (${EVIL_HOST} and any other)`);
    recordFigure(SECTION, "Content-Security-Policy violations", all((seen) => seen.cspViolations).length, "must be 0: securitypolicyviolation events and console reports");
  });
});

baseTest("the detectors see a payload that gets into the page as markup", async ({ page, baseURL }) => {
  // The guard against a test that cannot fail: markup put into the page the way a
  // rendering bug would (innerHTML) is reported by the same checks as above.
  const seen = await watchContext(page.context(), new URL(baseURL!).origin);
  await page.goto("/lessons");
  await page.waitForLoadState("networkidle");
  expect(await findPayloadTraces(page)).toEqual([]);
  await page.evaluate((payloads) => {
    const bug = document.createElement("div");
    bug.innerHTML = payloads.join("");
    document.body.append(bug);
  }, [XSS_PAYLOADS[1]!, XSS_PAYLOADS[2]!, XSS_PAYLOADS[18]!]);
  await expect.poll(() => seen.cspViolations.length).toBeGreaterThan(0);
  const traces = await findPayloadTraces(page);
  expect(traces.some((trace) => trace.startsWith("handler attribute: <img")), traces.join("\n")).toBe(true);
  expect(traces.some((trace) => trace.startsWith(`element: <img src="http://${EVIL_HOST}`)), traces.join("\n")).toBe(true);
  expect(traces.some((trace) => trace.startsWith('link: <a href="javascript:')), traces.join("\n")).toBe(true);
  // The image on another host was asked for, and stopped by the policy before it left.
  await expect.poll(() => requestsBlockedByPolicy(seen)).toEqual([`http://${EVIL_HOST}/img.png`]);
  expect(requestsThatLeft(seen)).toEqual([]);
  expect(seen.dialogs).toEqual([]);
});
