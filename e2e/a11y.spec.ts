import type { Page } from "@playwright/test";
import { expect, test } from "./support/fixtures";
import { packetFor, storePacket, uniqueId } from "./support/api";
import { axeOn } from "./support/axe";

/**
 * axe (WCAG 2.2 AA) on every page, in light and in dark as the system prefers them (no
 * theme cookie: the pages follow prefers-color-scheme). Serious and critical findings fail.
 * The scheme changes only colours (the same markup, app/globals.css's tokens, by CSS media
 * query alone: no script reads the scheme), so each page is loaded once: light runs every
 * rule, then the same document switched to dark runs axe's colour rules (decision 078).
 */

const WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa"];
const FAILING = new Set(["serious", "critical"]);
/** axe's rules that read colours: text contrast, and links told apart from text by colour alone. */
const COLOUR_RULES = ["color-contrast", "link-in-text-block"];

/** The findings that fail, one line each with the first few offending elements, for the failure message. */
async function seriousFindings(page: Page, colourOnly: boolean): Promise<string[]> {
  const axe = axeOn(page).withTags(WCAG_TAGS);
  const results = await (colourOnly ? axe.withRules(COLOUR_RULES) : axe).analyze();
  return results.violations
    .filter((violation) => FAILING.has(violation.impact ?? ""))
    .map((violation) => {
      const where = violation.nodes.slice(0, 3).map((node) => `${node.target.join(" ")}: ${node.failureSummary?.split("\n").slice(1, 2).join("") ?? ""}`);
      return `${violation.impact} ${violation.id} (${violation.nodes.length}×): ${where.join(" | ")}`;
    });
}

const run = uniqueId("a11y");
const threads = { critical: `${run}-critical`, ready: `${run}-ready` };

test.beforeAll(async ({ request, agentToken }) => {
  // A card in Needs you (a high risk and a blocking question), one in Ready, and a lesson.
  await storePacket(
    request,
    agentToken,
    packetFor(threads.critical, {
      open_risks: [{ severity: "high", detail: `${run}: the migration drops a column` }],
      questions_for_human: [{ question: `${run}: may I drop the legacy table?`, blocking: true }],
      failed_attempts: [{ attempt: `npm run ${run}`, reason: "timed out" }],
    }),
  );
  await storePacket(request, agentToken, packetFor(threads.ready, { open_risks: [], failed_attempts: [{ attempt: `npm run ${run}`, reason: "timed out" }] }));
});

const PAGES: { name: string; path: string; ready: (page: Page) => Promise<void>; signedOut?: boolean }[] = [
  { name: "board", path: `/?q=${run}`, ready: (page) => expect(page.getByTestId("board-card").first()).toBeVisible() },
  { name: "board as a list", path: `/?q=${run}&view=list`, ready: (page) => expect(page.getByTestId("board-row").first()).toBeVisible() },
  { name: "thread", path: `/threads/${threads.critical}`, ready: (page) => expect(page.getByRole("heading", { level: 1 })).toBeVisible() },
  { name: "risks", path: `/risks?q=${run}`, ready: (page) => expect(page.getByTestId("risk-group").first()).toBeVisible() },
  { name: "questions", path: "/questions", ready: (page) => expect(page.getByTestId("question-group").first()).toBeVisible() },
  { name: "timeline", path: "/timeline", ready: (page) => expect(page.getByRole("heading", { level: 1 })).toBeVisible() },
  { name: "lessons", path: "/lessons", ready: (page) => expect(page.getByRole("heading", { name: "Recurring failures" })).toBeVisible() },
  { name: "users", path: "/admin/users", ready: (page) => expect(page.getByRole("heading", { level: 1 })).toBeVisible() },
  { name: "tokens", path: "/admin/tokens", ready: (page) => expect(page.getByRole("heading", { level: 1 })).toBeVisible() },
  { name: "webhooks", path: "/admin/webhooks", ready: (page) => expect(page.getByRole("heading", { level: 1 })).toBeVisible() },
  { name: "integrations", path: "/admin/integrations", ready: (page) => expect(page.getByRole("heading", { level: 1 })).toBeVisible() },
  { name: "usage", path: "/usage", ready: (page) => expect(page.getByRole("heading", { name: "Usage" })).toBeVisible() },
  { name: "sign-in", path: "/sign-in", signedOut: true, ready: (page) => expect(page.getByRole("button", { name: /sign in/i })).toBeVisible() },
];

/** Light with every rule, then the same document in dark with the colour rules; both must be clean. */
async function checkBothSchemes(page: Page, entry: (typeof PAGES)[number]): Promise<void> {
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto(entry.path);
  await entry.ready(page);
  expect.soft(await seriousFindings(page, false), "light").toEqual([]);
  await page.emulateMedia({ colorScheme: "dark" });
  // The switch took: the page's own colour-scheme now reads dark (app/globals.css), so axe sees dark colours.
  await expect.poll(() => page.evaluate(() => getComputedStyle(document.documentElement).colorScheme)).toBe("dark");
  expect.soft(await seriousFindings(page, true), "dark (system preference)").toEqual([]);
}

for (const entry of PAGES) {
  if (entry.signedOut) {
    test(`${entry.name}, light and dark: no serious or critical axe findings`, async ({ browser, baseURL }) => {
      const context = await browser.newContext({ baseURL, storageState: { cookies: [], origins: [] } });
      try {
        await checkBothSchemes(await context.newPage(), entry);
      } finally {
        await context.close();
      }
    });
  } else {
    test(`${entry.name}, light and dark: no serious or critical axe findings`, async ({ page }) => checkBothSchemes(page, entry));
  }
}
