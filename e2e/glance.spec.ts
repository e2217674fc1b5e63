import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test, type Browser, type Page } from "@playwright/test";
import { NEEDS_GROUPS, NEEDS_GROUP_TITLES } from "../lib/board/needs-groups";
import { batonCli, freePort, ownAdmin, startOwnServer, stopOwnServer, type OwnServer } from "./support/own-server";

/**
 * The board at a glance with a fleet of 500 agents (issue 16's Show): the demo fleet
 * (`baton demo --agents 500`, about 60% needing a person) on a server and database of its
 * own, so the suite's other specs never see it. At 1440x900 at least 12 Needs-you cards are
 * wholly above the fold, each saying why in visible words, the most urgent groups first;
 * at 390x844 the first card is a Needs-you card and nothing scrolls sideways.
 */

const ADMIN = { username: "glance-admin", password: "glance e2e password" };
const URGENT = new Set<string>([NEEDS_GROUP_TITLES.question, NEEDS_GROUP_TITLES.severe_risk].map((title) => title.toUpperCase()));

let server: OwnServer | undefined;
let folder = "";

test.beforeAll(async () => {
  test.setTimeout(180_000);
  folder = mkdtempSync(path.join(tmpdir(), "baton-e2e-glance-"));
  const databaseUrl = `file:${path.join(folder, "baton.db")}`;
  // The CLI migrates the fresh database before it writes.
  batonCli(databaseUrl, ["demo", "--agents", "500"]);
  server = await startOwnServer({ databaseUrl, port: await freePort() });
  await (await ownAdmin(server, ADMIN)).dispose();
});

test.afterAll(async () => {
  if (server) await stopOwnServer(server);
  rmSync(folder, { recursive: true, force: true });
});

async function boardAt(browser: Browser, viewport: { width: number; height: number }): Promise<Page> {
  const context = await browser.newContext({ baseURL: server!.baseURL, viewport, storageState: { cookies: [], origins: [] } });
  const signIn = await context.request.post("/api/v1/session", { headers: { origin: server!.baseURL }, data: ADMIN });
  expect(signIn.status()).toBe(200);
  const page = await context.newPage();
  await page.goto("/");
  await expect(page.getByRole("status").filter({ hasText: /\d+ threads · live/ })).toBeVisible();
  return page;
}

/** The cards (and group headings) whose whole box is inside the first screenful, top to bottom. */
async function aboveTheFold(page: Page) {
  return page.getByRole("region", { name: /^Needs you\b/ }).evaluate((column) => {
    const inView = (element: Element) => {
      const box = element.getBoundingClientRect();
      return box.top >= 0 && box.left >= 0 && box.bottom <= window.innerHeight && box.right <= window.innerWidth;
    };
    return {
      cards: [...column.querySelectorAll('[data-testid="board-card"]')].filter(inView).map((card) => ({
        reasons: [...card.querySelectorAll("[data-reason]")].map((reason) => (reason as HTMLElement).innerText.trim()),
      })),
      groups: [...column.querySelectorAll("[data-group]")].filter(inView).map((heading) => (heading as HTMLElement).innerText.split("\n")[0]!.trim().toUpperCase()),
    };
  });
}

test("at 1440x900, 500 agents: a dozen Needs-you cards above the fold, each saying why, the most urgent first", async ({ browser }) => {
  const page = await boardAt(browser, { width: 1440, height: 900 });
  const seen = await aboveTheFold(page);
  expect(seen.cards.length).toBeGreaterThanOrEqual(12);
  for (const card of seen.cards) expect(card.reasons.filter(Boolean).length, "a card above the fold names its reason in words").toBeGreaterThan(0);
  // The first screenful holds the groups that block an agent: its question, or a critical or high risk.
  expect(seen.groups.length).toBeGreaterThan(0);
  for (const group of seen.groups) expect(URGENT, `${group} above the fold`).toContain(group);
  expect(NEEDS_GROUPS.slice(0, 2)).toEqual(["question", "severe_risk"]);
  await page.context().close();
});

test("at 390x844, 500 agents: the first card is a Needs-you card and nothing scrolls sideways", async ({ browser }) => {
  const page = await boardAt(browser, { width: 390, height: 844 });
  const first = page.getByTestId("board-card").first();
  await expect(first).toBeVisible();
  await expect(page.getByRole("region", { name: /^Needs you\b/ }).getByTestId("board-card").first()).toHaveAttribute("data-thread-key", (await first.getAttribute("data-thread-key"))!);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await page.context().close();
});
