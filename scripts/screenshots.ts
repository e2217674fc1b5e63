// Uses lib/ server modules through the e2e support: let `server-only` resolve as on the server.
import "../bin/server-only.js";
import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { chromium, type Page } from "@playwright/test";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../e2e/support/chromium";
import { batonCli, freePort, startOwnServer } from "../e2e/support/own-server";

/**
 * npm run screenshots: every page with a demo fleet of 500 agents at 1440 light, 1440 dark (the system's
 * preference) and 390 phone, into test-results/screenshots/ (outside git), and the board at
 * docs/images/board.png for the README. Runs the production build (`npm run build` first).
 */

const OUT = path.resolve(process.env.BATON_SCREENSHOTS_DIR ?? "test-results/screenshots");
const ROOT = path.resolve("test-results/screenshots-server");
const DATABASE_URL = `file:${path.join(ROOT, "baton.db")}`;
const ADMIN = { username: "admin", password: "screenshots admin password" };
/** A fleet the size people run (BATON_SCREENSHOTS_AGENTS, default 500), not the demo's 34. */
const AGENTS = process.env.BATON_SCREENSHOTS_AGENTS ?? "500";
/** Only these pages (BATON_SCREENSHOTS_PAGES=board,risks), to look again at one page quickly. */
const ONLY = process.env.BATON_SCREENSHOTS_PAGES?.split(",").filter(Boolean);

const VIEWS = [
  { name: "1440-light", viewport: { width: 1440, height: 900 }, colorScheme: "light" as const },
  { name: "1440-dark", viewport: { width: 1440, height: 900 }, colorScheme: "dark" as const },
  { name: "390-phone", viewport: { width: 390, height: 844 }, colorScheme: "light" as const },
];

async function main() {
  rmSync(ROOT, { recursive: true, force: true });
  mkdirSync(ROOT, { recursive: true });
  mkdirSync(OUT, { recursive: true });
  batonCli(DATABASE_URL, ["user", "create", ADMIN.username, "--role", "admin"], { BATON_PASSWORD: ADMIN.password });
  batonCli(DATABASE_URL, ["demo", "--agents", AGENTS]);
  const server = await startOwnServer({ databaseUrl: DATABASE_URL, port: await freePort() });
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  try {
    // A thread with a question, for the thread page.
    const signIn = await browser.newContext({ baseURL: server.baseURL });
    const response = await signIn.request.post("/api/v1/session", { headers: { origin: server.baseURL }, data: ADMIN });
    if (response.status() !== 200) throw new Error(`sign-in: ${response.status()} ${await response.text()}`);
    const storageState = await signIn.storageState();
    const board = (await (await signIn.request.get("/api/v1/board")).json()) as { columns: { id: string; cards: { key: string }[] }[] };
    const threadKey = board.columns.find((column) => column.id === "needs_you")?.cards[0]?.key ?? board.columns.flatMap((column) => column.cards)[0]!.key;
    await signIn.close();

    const pages: { name: string; path: string; signedOut?: boolean }[] = [
      { name: "board", path: "/" },
      { name: "board-list", path: "/?view=list" },
      { name: "thread", path: `/threads/${encodeURIComponent(threadKey)}` },
      { name: "risks", path: "/risks" },
      { name: "questions", path: "/questions" },
      { name: "timeline", path: "/timeline" },
      { name: "lessons", path: "/lessons" },
      { name: "usage", path: "/usage" },
      { name: "integrations", path: "/admin/integrations" },
      { name: "users", path: "/admin/users" },
      { name: "tokens", path: "/admin/tokens" },
      { name: "webhooks", path: "/admin/webhooks" },
      { name: "sign-in", path: "/sign-in", signedOut: true },
    ];
    for (const view of VIEWS) {
      for (const entry of pages.filter((page) => !ONLY || ONLY.includes(page.name))) {
        const context = await browser.newContext({
          baseURL: server.baseURL,
          viewport: view.viewport,
          colorScheme: view.colorScheme,
          storageState: entry.signedOut ? { cookies: [], origins: [] } : storageState,
        });
        const page = await context.newPage();
        await page.goto(entry.path);
        await settle(page);
        const file = path.join(OUT, `${entry.name}-${view.name}.png`);
        await page.screenshot({ path: file });
        console.log(file);
        if (entry.name === "board") console.log(`  ${await needsYouAboveTheFold(page)} Needs you cards wholly above the fold`);
        if (entry.name === "board" && view.name === "1440-light") {
          // The README's picture: a JPEG-like size from a PNG of the first screenful.
          await page.screenshot({ path: path.resolve("docs/images/board.png"), clip: { x: 0, y: 0, width: 1440, height: 900 } });
        }
        await context.close();
      }
    }
  } finally {
    await browser.close();
    server.child.kill("SIGTERM");
  }
}

/** The figure the board is judged by at a glance: Needs you cards whose whole box is in the first screenful. */
async function needsYouAboveTheFold(page: Page): Promise<number> {
  const height = page.viewportSize()!.height;
  const width = page.viewportSize()!.width;
  const boxes = await page.getByRole("region", { name: /^Needs you\b/ }).getByTestId("board-card").evaluateAll((cards) => cards.map((card) => card.getBoundingClientRect().toJSON() as DOMRect));
  return boxes.filter((box) => box.top >= 0 && box.bottom <= height && box.left >= 0 && box.right <= width).length;
}

/** Waits until the page's data is on screen (live pages keep a stream open: no network idle). */
async function settle(page: Page) {
  await page.locator("main").waitFor();
  await page.waitForTimeout(1_500);
}

await main();
