/**
 * Chromium viewers of bench:viewers (in the viewers' process): the real board page, signed in,
 * filtered to a few threads of their own so that every card is in the DOM (the columns are
 * virtualised: a card out of view is not). A MutationObserver notes when a watched next action
 * appears in the page's text; the page is read every 200 ms, the times are the page's own.
 */
import type { Browser, BrowserContext, Page } from "@playwright/test";
import { launchChromium } from "./browser";

/** The page's observer: every "bench sustained next action N" added to the DOM, with the wall clock. */
const OBSERVER = `
  window.__benchFound = [];
  new MutationObserver(function (mutations) {
    for (const mutation of mutations) {
      const texts = mutation.type === "characterData" ? [mutation.target.textContent] : Array.from(mutation.addedNodes, function (node) { return node.textContent; });
      for (const text of texts) {
        if (!text) continue;
        for (const match of text.matchAll(/bench sustained next action \\d+/g)) window.__benchFound.push([match[0], performance.timeOrigin + performance.now()]);
      }
    }
  }).observe(document, { subtree: true, childList: true, characterData: true });
`;

let browser: Browser | null = null;

export interface BrowserViewerPlan {
  url: string;
  cookie: { name: string; value: string };
}

export class BrowserViewer {
  readonly kind = "browser";
  readonly bytes = 0;
  readonly seen = new Map<string, number>();
  cards = 0;
  private context: BrowserContext | null = null;
  private page: Page | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly plan: BrowserViewerPlan,
    private readonly keys: Set<string>,
    private readonly watched: Map<string, string>,
  ) {}

  wants(key: string): boolean {
    return this.keys.has(key);
  }

  async open(): Promise<void> {
    browser ??= await launchChromium();
    this.context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await this.context.addCookies([{ ...this.plan.cookie, url: new URL(this.plan.url).origin, httpOnly: true, sameSite: "Lax" }]);
    this.page = await this.context.newPage();
    await this.page.addInitScript(OBSERVER);
    await this.page.goto(this.plan.url, { waitUntil: "load", timeout: 60_000 });
    await this.page.waitForSelector('[data-testid="board-card"]', { timeout: 60_000 });
    this.cards = await this.page.locator('[data-testid="board-card"]').count();
    this.timer = setInterval(() => void this.read(), 200);
  }

  private async read(): Promise<void> {
    const found = (await this.page?.evaluate("window.__benchFound.splice(0)").catch(() => [])) as [string, number][];
    for (const [nextAction, at] of found) if (this.watched.has(nextAction) && !this.seen.has(nextAction)) this.seen.set(nextAction, at);
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.context?.close();
  }
}

export async function closeBrowser(): Promise<void> {
  await browser?.close();
  browser = null;
}
