import { chromium, type Browser } from "@playwright/test";

/** First-view figures of a page in headless Chromium (Debian's: Playwright cannot download its own here). */

import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../../e2e/support/chromium";

export { CHROMIUM_ARGS, CHROMIUM_PATH };
const NAVIGATION_TIMEOUT_MS = 60_000;

export interface FirstView {
  /** Largest Contentful Paint, ms from navigation start; null when Chromium reported none. */
  lcpMs: number | null;
  /** What the LCP was: tag, size in px² and the start of its text. */
  lcpElement: string | null;
  /** Every LCP candidate Chromium reported, in order: when, and what. */
  lcpCandidates: { ms: number; element: string }[];
  /** Main-thread tasks over 50 ms: how many, their total, and when the last one ended (ms from navigation start). */
  longTasks: { count: number; totalMs: number; lastEndMs: number | null };
  /** Main-thread time by kind (Chromium's Performance.getMetrics), in ms, for the whole first view. */
  mainThreadMs: { script: number; layout: number; style: number; tasks: number };
  fcpMs: number | null;
  /** Navigation timing, ms from navigation start. */
  ttfbMs: number;
  responseEndMs: number;
  domContentLoadedMs: number;
  loadMs: number;
  /** document.getElementsByTagName('*').length once the page settled. */
  domNodes: number;
  /** Elements matching `countSelector`, e.g. the cards rendered. */
  counted: number;
  /** Bytes of the document as sent (compressed when the server compressed it) and decoded. */
  documentTransferBytes: number;
  documentDecodedBytes: number;
  /** Requests the page made to paths starting with `watchPath`, during the first view. */
  watchedRequests: number;
  /** Errors the page threw or logged, and failed requests (event streams cut off at close excepted). */
  errors: string[];
  /** Where the page ended up, after any redirect. */
  finalUrl: string;
}

export interface FirstViewOptions {
  url: string;
  viewport: { width: number; height: number };
  /** How long to wait after `load` before reading LCP and counting nodes. */
  settleMs: number;
  countSelector: string;
  watchPath: string;
  /** Cookies put in the fresh context before the navigation (a session, for pages behind sign-in). */
  cookies?: { name: string; value: string }[];
  /**
   * What the page measured must be: its final path and an element it shows. Otherwise the
   * measurement throws, rather than report the figures of another page (a redirect to sign-in).
   */
  expect?: { path: string; selector: string; what: string };
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, headless: true });
}

/** One first view in a fresh context (empty cache, no cookies but `options.cookies`). */
export async function measureFirstView(browser: Browser, options: FirstViewOptions): Promise<FirstView> {
  const context = await browser.newContext({ viewport: options.viewport });
  if (options.cookies?.length) {
    const origin = new URL(options.url).origin;
    await context.addCookies(options.cookies.map(({ name, value }) => ({ name, value, url: origin, httpOnly: true, sameSite: "Lax" as const })));
  }
  const errors: string[] = [];
  let watchedRequests = 0;
  try {
    const page = await context.newPage();
    // Long tasks are not buffered: observe them from the first script on.
    await page.addInitScript(() => {
      const store: [number, number][] = [];
      (window as unknown as { __benchLongTasks: [number, number][] }).__benchLongTasks = store;
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) store.push([entry.startTime, entry.duration]);
      }).observe({ type: "longtask" });
    });
    const cdp = await context.newCDPSession(page);
    await cdp.send("Performance.enable");
    page.on("pageerror", (error) => errors.push(`pageerror: ${error.message}`));
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(`console: ${message.text()} (${message.location().url})`);
    });
    page.on("request", (request) => {
      if (new URL(request.url()).pathname.startsWith(options.watchPath)) watchedRequests++;
    });
    page.on("requestfailed", (request) => errors.push(`request failed: ${request.url()} ${request.failure()?.errorText ?? ""}`));
    page.on("response", (response) => {
      if (response.status() >= 400) errors.push(`HTTP ${response.status()}: ${response.url()}`);
    });
    await page.goto(options.url, { waitUntil: "load", timeout: NAVIGATION_TIMEOUT_MS });
    await page.waitForTimeout(options.settleMs);
    const finalUrl = page.url();
    if (options.expect) {
      const { path, selector, what } = options.expect;
      const found = await page.locator(selector).count();
      if (new URL(finalUrl).pathname !== path || found === 0) {
        throw new Error(
          `the first view of ${options.url} is not ${what}: it ended on ${finalUrl} (wanted the path ${path}) showing ${found} "${selector}" ` +
            `(title "${await page.title()}"); its figures would be another page's`,
        );
      }
    }
    const figures = await page.evaluate(async (countSelector) => {
      type LcpEntry = PerformanceEntry & { element?: Element | null; size?: number };
      const candidates = await new Promise<LcpEntry[]>((resolve) => {
        const seen: LcpEntry[] = [];
        const observer = new PerformanceObserver((list) => {
          seen.push(...(list.getEntries() as LcpEntry[]));
        });
        observer.observe({ type: "largest-contentful-paint", buffered: true });
        // Buffered entries arrive in an observer task: give it a moment.
        setTimeout(() => {
          seen.push(...(observer.takeRecords() as LcpEntry[]));
          observer.disconnect();
          resolve(seen);
        }, 250);
      });
      // No named function expressions in here: tsx would wrap them in a helper the page does not have.
      const described = candidates.map((entry) => ({
        ms: entry.startTime,
        element: entry.element
          ? `<${entry.element.tagName.toLowerCase()}> ${Math.round(entry.size ?? 0)} px², "${(entry.element.textContent ?? "").trim().slice(0, 60)}"`
          : `(element removed since) ${Math.round(entry.size ?? 0)} px²`,
      }));
      const lcp = described.at(-1) ?? null;
      const tasks = (window as unknown as { __benchLongTasks?: [number, number][] }).__benchLongTasks ?? [];
      const navigation = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming;
      const fcp = performance.getEntriesByName("first-contentful-paint")[0];
      return {
        lcpMs: lcp ? lcp.ms : null,
        lcpElement: lcp ? lcp.element : null,
        lcpCandidates: described,
        longTasks: {
          count: tasks.length,
          totalMs: tasks.reduce((sum, [, duration]) => sum + duration, 0),
          lastEndMs: tasks.length ? Math.max(...tasks.map(([start, duration]) => start + duration)) : null,
        },
        fcpMs: fcp ? fcp.startTime : null,
        ttfbMs: navigation.responseStart,
        responseEndMs: navigation.responseEnd,
        domContentLoadedMs: navigation.domContentLoadedEventEnd,
        loadMs: navigation.loadEventEnd,
        domNodes: document.getElementsByTagName("*").length,
        counted: document.querySelectorAll(countSelector).length,
        documentTransferBytes: navigation.encodedBodySize,
        documentDecodedBytes: navigation.decodedBodySize,
      };
    }, options.countSelector);
    const { metrics } = (await cdp.send("Performance.getMetrics")) as { metrics: { name: string; value: number }[] };
    const seconds = (name: string) => (metrics.find((metric) => metric.name === name)?.value ?? NaN) * 1000;
    const mainThreadMs = {
      script: seconds("ScriptDuration"),
      layout: seconds("LayoutDuration"),
      style: seconds("RecalcStyleDuration"),
      tasks: seconds("TaskDuration"),
    };
    return { ...figures, mainThreadMs, watchedRequests, errors, finalUrl };
  } finally {
    await context.close();
    // Streams the page kept open are cut off by closing it: not an error of the page.
    for (let i = errors.length - 1; i >= 0; i--) if (/ERR_ABORTED/.test(errors[i]!)) errors.splice(i, 1);
  }
}
