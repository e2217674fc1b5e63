import { expect, test } from "./support/fixtures";
import { uniqueId } from "./support/api";
import { column, columnCount, getBoard } from "./support/board";

/**
 * The first-run state. This spec runs in its own Playwright project, before every other
 * (playwright.config.ts), so the shared e2e database is still empty here.
 */
test("an empty board says how to send a first packet and how to load the demo", async ({ page, request, agentToken }) => {
  const board = await getBoard(request, agentToken);
  expect(board.total, "the empty-board project must run before anything is posted").toBe(0);
  await page.goto("/");
  await expect(page.getByRole("heading", { name: "No handoff packets yet" })).toBeVisible();
  await expect(page.getByText("npx baton demo")).toBeVisible();
  await expect(page.getByText(/baton token create/)).toBeVisible();
  await expect(page.getByRole("region", { name: /^Needs you/ })).toHaveCount(0);
  // A filter that matches nothing shows the columns, empty, not the first-run help.
  await page.goto(`/?q=${uniqueId("nothing")}`);
  await expect(page.getByRole("heading", { name: "No handoff packets yet" })).toHaveCount(0);
  // Empty columns are narrow rails with their count.
  await expect(column(page, "Ready")).toHaveAttribute("data-empty", "true");
  expect(await columnCount(page, "Ready")).toBe(0);
});

test("the usage page of an empty install says no packet reported usage, instead of tables of headers", async ({ page }) => {
  await page.goto("/usage");
  const totals = page.getByRole("region", { name: "Totals" });
  await expect(totals.getByText(/^No packet reported usage in the last \d+ days\.$/)).toBeVisible();
  await expect(totals.getByRole("table")).toHaveCount(0);
  await expect(page.getByText("No cost reported in this window.")).toBeVisible();
});
