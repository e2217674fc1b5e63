import { expect, type BrowserContext, type Page, type Request, type Response } from "@playwright/test";

/**
 * What a browser context did while hostile content was on screen: every dialog,
 * request to another host, Content-Security-Policy violation, new window and
 * document response, collected from the moment `watchContext` is called.
 */
export interface Observations {
  dialogs: string[];
  /** Requests to other hosts the browser started; see requestsThatLeft. */
  outsideRequests: Request[];
  cspViolations: string[];
  popups: string[];
  documents: { url: string; status: number; contentType: string; policy: string | null }[];
}

declare global {
  interface Window {
    __xss?: unknown;
    __reportCspViolation?: (text: string) => Promise<void>;
  }
}

/** Schemes that never leave the browser. */
const LOCAL_SCHEMES = new Set(["data:", "blob:", "about:"]);

export async function watchContext(context: BrowserContext, appOrigin: string): Promise<Observations> {
  const seen: Observations = { dialogs: [], outsideRequests: [], cspViolations: [], popups: [], documents: [] };
  context.on("dialog", (dialog) => {
    seen.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss().catch(() => {});
  });
  context.on("request", (request) => {
    const url = new URL(request.url());
    if (url.origin !== appOrigin && !LOCAL_SCHEMES.has(url.protocol)) seen.outsideRequests.push(request);
  });
  context.on("console", (message) => {
    if (/Content[- ]Security[- ]Policy/i.test(message.text())) seen.cspViolations.push(`console: ${message.text()}`);
  });
  context.on("response", (response) => recordDocument(seen, response));
  // Pages the spec opens have no opener; a window a payload opened would.
  context.on("page", (page) => {
    void page.opener().then((opener) => {
      if (opener) seen.popups.push(page.url());
    });
  });
  // Playwright's init scripts and bindings are not subject to the page's policy.
  await context.exposeFunction("__reportCspViolation", (text: string) => {
    seen.cspViolations.push(`event: ${text}`);
  });
  await context.addInitScript(() => {
    window.addEventListener(
      "securitypolicyviolation",
      (event) =>
        void window.__reportCspViolation?.(
          `${event.effectiveDirective} blocked ${event.blockedURI || "inline"} on ${location.pathname} (${event.sourceFile}:${event.lineNumber}:${event.columnNumber}): ${event.sample}`,
        ),
      true,
    );
  });
  return seen;
}

function recordDocument(seen: Observations, response: Response): void {
  const request = response.request();
  if (!request.isNavigationRequest() || (response.status() >= 300 && response.status() < 400)) return;
  const headers = response.headers();
  seen.documents.push({
    url: response.url(),
    status: response.status(),
    contentType: headers["content-type"] ?? "",
    policy: headers["content-security-policy"] ?? null,
  });
}

// Chromium's failure text for a request the page's policy refused ("csp"; older builds net::ERR_BLOCKED_BY_CSP).
const blockedByPolicy = (request: Request) => ["csp", "net::ERR_BLOCKED_BY_CSP"].includes(request.failure()?.errorText ?? "");

/**
 * Requests to other hosts that were not stopped by the page's policy. Chromium
 * reports a request the policy blocked too, and then fails it; the failure can
 * arrive a moment later, so callers poll.
 */
export const requestsThatLeft = (seen: Observations): string[] => seen.outsideRequests.filter((request) => !blockedByPolicy(request)).map((request) => request.url());
export const requestsBlockedByPolicy = (seen: Observations): string[] => seen.outsideRequests.filter(blockedByPolicy).map((request) => request.url());

/** The script sources of a policy: its script-src, or default-src when it has none. */
export function scriptSources(policy: string): string[] {
  const directives = new Map(policy.split(";").map((part) => {
    const [name = "", ...sources] = part.trim().split(/\s+/);
    return [name.toLowerCase(), sources] as const;
  }));
  return directives.get("script-src") ?? directives.get("default-src") ?? [];
}

/**
 * Anything in the live DOM that a payload could have made: executed script
 * markers, elements that load or run things, event-handler attributes, links to
 * scripts or other hosts (other than verdict reports, which the product links
 * to on purpose), and scripts Next did not put there. An empty list is clean.
 */
export function findPayloadTraces(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const traces: string[] = [];
    const describe = (element: Element) => element.outerHTML.slice(0, 160);
    if (window.__xss !== undefined) traces.push(`window.__xss = ${String(window.__xss)}`);
    // A meta refresh or a <base> that took effect: the document is no longer this site's page.
    if (!/^https?:$/.test(location.protocol)) traces.push(`not a page of the site: ${location.href}`);
    if (!document.baseURI.startsWith(location.origin)) traces.push(`base URL changed to ${document.baseURI}`);
    const dangerous = 'iframe, frame, object, embed, base, meta[http-equiv], form[action*="evil" i], [src*="evil" i], [srcset*="evil" i], [poster*="evil" i], [data*="evil" i], link[href*="evil" i], [style*="url(" i], svg [href*="evil" i]';
    for (const element of document.querySelectorAll(dangerous)) traces.push(`element: ${describe(element)}`);
    for (const element of document.querySelectorAll("*")) {
      for (const attribute of element.attributes) {
        if (attribute.name.startsWith("on")) traces.push(`handler attribute: ${describe(element)}`);
      }
    }
    for (const anchor of document.querySelectorAll<HTMLAnchorElement>("a[href]")) {
      const url = new URL(anchor.href, location.href);
      const verdictLink = anchor.closest('[data-testid="verdict-pointer"]') && /^https?:$/.test(url.protocol) && anchor.relList.contains("noreferrer");
      if (url.origin !== location.origin && !verdictLink) traces.push(`link: ${describe(anchor)}`);
    }
    for (const script of document.scripts) {
      const ours = script.src ? new URL(script.src).origin === location.origin && new URL(script.src).pathname.startsWith("/_next/") : script.nonce !== "";
      if (!ours) traces.push(`script: ${describe(script)}`);
    }
    for (const entry of performance.getEntriesByType("resource")) {
      if (!entry.name.startsWith(location.origin) && !/^(data|blob):/.test(entry.name)) traces.push(`resource: ${entry.name}`);
    }
    return traces;
  });
}

/** The page shows hostile text as text, and nothing in it ran or loaded. */
export async function expectNothingRan(page: Page, label: string): Promise<void> {
  expect(await findPayloadTraces(page), `${label}: traces of a payload in the DOM`).toEqual([]);
}

/** Every document the context received had a policy without inline scripts or eval. */
export function expectStrictPolicies(seen: Observations): void {
  for (const document of seen.documents) {
    expect(document.policy, `${document.url} (${document.status}) sent no Content-Security-Policy`).not.toBeNull();
    const sources = scriptSources(document.policy!);
    expect(sources, `${document.url}: script sources`).not.toContain("'unsafe-inline'");
    expect(sources, `${document.url}: script sources`).not.toContain("'unsafe-eval'");
    if (document.contentType.startsWith("text/html")) expect(sources.some((source) => source.startsWith("'nonce-")), `${document.url}: a nonce`).toBe(true);
  }
}
