import type { Page } from "@playwright/test";
import { expect, test } from "./support/fixtures";
import { getJson, packetFor, storePacket, uniqueId } from "./support/api";
import { column, waitForLive, type ColumnTitle } from "./support/board";
import type { RiskListDto } from "../lib/views/risks/dto";

/** The risks triage list: bulk triage from the keyboard, and a resolved risk that comes back. */

const inColumn = (page: Page, title: ColumnTitle, key: string) => column(page, title).locator(`[data-thread-key="${key}"]`);

/** The risk rows on the page, top to bottom. */
const riskRows = (page: Page) => page.getByTestId("risk-group");
const currentRow = (page: Page) => page.locator('[data-testid="risk-group"][aria-current="true"]');

/** Waits until the risks page is hydrated and hears the ledger live. */
async function waitForRisksLive(page: Page): Promise<void> {
  await expect(page.getByText(/ · live$/)).toBeVisible({ timeout: 10_000 });
}

test("triage a risk in bulk from the keyboard and see the cards move", async ({ page, request, agentToken }) => {
  const run = uniqueId("risks-bulk");
  const keys = [`${run}-a`, `${run}-b`];
  const details = keys.map((key) => `${key}: production credentials may leak into the build log`);
  for (const [index, key] of keys.entries()) {
    await storePacket(request, agentToken, packetFor(key, { open_risks: [{ severity: "critical", detail: details[index] }] }));
  }

  // The board, open in another tab, shows both cards waiting for a person.
  const board = await page.context().newPage();
  await board.goto(`/?q=${run}`);
  await waitForLive(board);
  for (const key of keys) await expect(inColumn(board, "Needs you", key)).toBeVisible();

  await page.goto(`/risks?q=${run}`);
  await waitForRisksLive(page);
  await expect(riskRows(page)).toHaveCount(2);

  // j brings the focus to the first row, x selects it; j moves on, x selects the second.
  await page.keyboard.press("j");
  await expect(currentRow(page)).toBeFocused();
  const first = (await currentRow(page).getAttribute("data-fingerprint"))!;
  await page.keyboard.press("x");
  await page.keyboard.press("j");
  await expect(currentRow(page)).toBeFocused();
  expect(await currentRow(page).getAttribute("data-fingerprint")).not.toBe(first);
  await page.keyboard.press("x");
  for (const detail of details) await expect(page.getByRole("checkbox", { name: `Select ${detail}` })).toBeChecked();
  const triage = page.getByRole("group", { name: "Triage" });
  await expect(triage.getByRole("button", { name: "Acknowledge 2" })).toBeEnabled();

  await page.keyboard.press("a");
  await expect(page.getByRole("status").filter({ hasText: "Acknowledged 2 risks." })).toBeAttached();
  for (const row of await riskRows(page).all()) await expect(row).toContainText("acknowledged");
  await expect(page.getByRole("checkbox", { name: /^Select / }).first()).not.toBeChecked();
  // The current row is acknowledged now: Acknowledge does not apply, and says why.
  await expect(triage.getByRole("button", { name: "Acknowledge 1" })).toBeDisabled();
  await expect(triage.getByText("Acknowledge: It is already acknowledged.")).toBeVisible();
  await expect(triage.getByRole("button", { name: "Resolve 1" })).toBeEnabled();

  // The board moved both cards out of Needs you by itself (live).
  for (const key of keys) {
    await expect(inColumn(board, "Ready", key)).toBeVisible();
    await expect(inColumn(board, "Needs you", key)).toHaveCount(0);
  }
  await board.close();

  // The API agrees: each risk acknowledged by the admin.
  const list = await getJson<RiskListDto>(request, agentToken, `/api/v1/risks?q=${encodeURIComponent(run)}`);
  expect(list.groups.flatMap((group) => group.threads.map((thread) => [thread.thread_key, thread.state, thread.triage?.by])).sort()).toEqual(
    keys.map((key) => [key, "acknowledged", "admin"]),
  );
});

test("a regressed risk returns to the top", async ({ page, request, agentToken }) => {
  const key = uniqueId("risks-regress");
  const medium = `${key}: the cache warms slowly after deploys`;
  const low = `${key}: the flaky migration test may hide a real failure`;
  const risks = [
    { severity: "medium", detail: medium },
    { severity: "low", detail: low },
  ];
  await storePacket(request, agentToken, packetFor(key, { open_risks: risks }));

  await page.goto(`/?q=${key}`);
  await waitForLive(page);
  // Nothing here needs a person yet.
  await expect(inColumn(page, "Ready", key)).toBeVisible();

  await page.goto(`/risks?q=${key}`);
  await waitForRisksLive(page);
  await expect(riskRows(page)).toHaveCount(2);
  await expect(riskRows(page).first()).toContainText(medium);

  // Resolve the low risk from the keyboard: it leaves the default view.
  await page.keyboard.press("j");
  await page.keyboard.press("j");
  await expect(currentRow(page)).toContainText(low);
  await page.keyboard.press("r");
  await expect(page.getByRole("status").filter({ hasText: "Resolved 1 risk." })).toBeAttached();
  await expect(riskRows(page)).toHaveCount(1);
  await expect(page.getByText("1 risk resolved or snoozed not shown.")).toBeVisible();

  // The agent's next session carries it again: the open page shows it on top, badged, from the
  // stream's delta alone (no list refetched).
  const refetches: string[] = [];
  page.on("request", (sent) => void (new URL(sent.url()).pathname === "/api/v1/risks" && refetches.push(sent.url())));
  await storePacket(request, agentToken, packetFor(key, { summary: `second session of ${key}`, open_risks: risks }));
  await expect(riskRows(page)).toHaveCount(2);
  expect(refetches).toEqual([]);
  const top = riskRows(page).first();
  await expect(top).toContainText(low);
  await expect(top).toContainText("regressed");
  await expect(riskRows(page).nth(1)).toContainText(medium);

  // And the card is back in front of a person, for a low risk.
  await page.goto(`/?q=${key}`);
  await waitForLive(page);
  await expect(inColumn(page, "Needs you", key)).toBeVisible();
  await expect(inColumn(page, "Needs you", key).getByRole("link")).toHaveAttribute("title", "needs a person: 1 resolved risk(s) came back");
  await expect(inColumn(page, "Needs you", key).getByRole("list", { name: "Needs you because" })).toHaveText("1 resolved risk came back");
});

test("a long list comes a page at a time: Show more from the keyboard, and triage on the rows it loaded", async ({ page, request, agentToken }) => {
  const key = uniqueId("risks-paged");
  const details = Array.from({ length: 130 }, (_, n) => `${key}: queue r${n} may drop messages under load`);
  await storePacket(request, agentToken, packetFor(key, { open_risks: details.map((detail) => ({ severity: "medium", detail })) }));

  await page.goto(`/risks?q=${key}`);
  await waitForRisksLive(page);
  await expect(riskRows(page)).toHaveCount(100);
  const more = page.getByRole("button", { name: "Show more (30 more)" });
  await more.focus();
  await page.keyboard.press("Enter");
  await expect(riskRows(page)).toHaveCount(130);
  await expect(page.getByRole("button", { name: /^Show more/ })).toHaveCount(0);

  // A row of the second page is triaged like any other: select it, then a.
  const last = riskRows(page).last();
  const detail = (await last.getAttribute("data-fingerprint"))!;
  await last.getByRole("checkbox").check();
  await page.keyboard.press("a");
  await expect(page.getByRole("status").filter({ hasText: "Acknowledged 1 risk." })).toBeAttached();
  await expect(page.locator(`[data-testid="risk-group"][data-fingerprint="${detail}"]`)).toContainText("acknowledged");
});

test("sort by a column's header from the keyboard: kept in the URL, and triage still works", async ({ page, request, agentToken }) => {
  const key = uniqueId("risks-sorted");
  const details = ["b", "c", "a"].map((letter) => `${key} ${letter}: the sort by detail puts this one in its place`);
  await storePacket(request, agentToken, packetFor(key, { open_risks: details.map((detail, n) => ({ severity: ["low", "critical", "medium"][n], detail })) }));

  await page.goto(`/risks?q=${key}`);
  await waitForRisksLive(page);
  const detailHeader = page.getByRole("columnheader", { name: "Detail" });
  await expect(riskRows(page).first()).toContainText(`${key} c:`);
  await expect(detailHeader).not.toHaveAttribute("aria-sort");

  // The header's button, from the keyboard: A to Z, then Z to A; the order lives in the URL.
  await page.getByRole("button", { name: "Detail" }).focus();
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/sort=detail/);
  await expect(detailHeader).toHaveAttribute("aria-sort", "ascending");
  await expect(riskRows(page)).toHaveText([/ a:/, / b:/, / c:/]);
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/order=desc/);
  await expect(detailHeader).toHaveAttribute("aria-sort", "descending");
  await expect(riskRows(page)).toHaveText([/ c:/, / b:/, / a:/]);

  await page.reload();
  await waitForRisksLive(page);
  await expect(riskRows(page)).toHaveText([/ c:/, / b:/, / a:/]);

  // Triage from the keyboard on the sorted table: the first row (c) is acknowledged.
  await page.keyboard.press("j");
  await expect(currentRow(page)).toContainText(`${key} c:`);
  await page.keyboard.press("a");
  await expect(page.getByRole("status").filter({ hasText: "Acknowledged 1 risk." })).toBeAttached();
  await expect(riskRows(page).first()).toContainText("acknowledged");
});
