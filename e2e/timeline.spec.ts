import type { Page } from "@playwright/test";
import { expect, test } from "./support/fixtures";
import { packetFor, storePacket, uniqueId } from "./support/api";

/**
 * The timeline (/timeline): a thread's versions as markers on its lane, the
 * next action on hover or focus, the version opened by a click or Enter, the
 * ledger below, all kept live.
 */

const LIVE_TIMEOUT_MS = 10_000;

const lanes = (page: Page) => page.getByRole("list", { name: "Lanes" }).getByRole("listitem");
const versionMarkers = (page: Page, key: string) => lanes(page).filter({ has: page.getByRole("link", { name: key, exact: true }) }).getByRole("link", { name: /^Version \d+ of / });
const marker = (page: Page, key: string, number: number) => page.getByRole("link", { name: new RegExp(`^Version ${number} of ${key}: `) });
const feedItems = (page: Page) => page.getByRole("list", { name: "Ledger events" }).getByRole("listitem");

test("the timeline shows a thread's versions and opens one", async ({ page, request, agentToken }) => {
  const key = uniqueId("timeline");
  const next = ["write the failing refund test", "make the refund test pass", "ask for a review of the refund fix", "merge the refund fix"];
  const severities = ["low", "medium", "high", "critical"];
  const post = (index: number) =>
    storePacket(
      request,
      agentToken,
      packetFor(key, {
        created_at: new Date(Date.now() - (4 - index) * 60_000).toISOString(),
        open_risks: [{ severity: severities[index], detail: `risk ${index} of ${key}` }],
        next_action: next[index],
      }),
    );
  const v1 = await post(0);
  const v2 = await post(1);
  await post(2);

  await page.goto(`/timeline?q=${encodeURIComponent(key)}`);
  await expect(page.getByRole("heading", { name: "Timeline" })).toBeVisible();
  // Hydrated and following the ledger.
  await expect(page.getByRole("status")).toContainText("live");
  await expect(lanes(page)).toHaveCount(1);
  await expect(lanes(page).first().getByRole("link", { name: key, exact: true })).toHaveAttribute("href", `/threads/${encodeURIComponent(key)}`);
  await expect(versionMarkers(page, key)).toHaveCount(3);
  await expect(marker(page, key, 1)).toHaveAttribute("href", `/threads/${encodeURIComponent(key)}?to=${v1.packet_id}`);
  await expect(marker(page, key, 2)).toHaveAccessibleName(new RegExp(`^Version 2 of ${key}: medium, `));
  await expect(marker(page, key, 3)).toHaveAccessibleName(new RegExp(`^Version 3 of ${key}: high, `));
  // Placed by the packet's own created_at, which differs from when Baton received it: both are told.
  await expect(marker(page, key, 1)).toHaveAccessibleName(/ agent time, received /);

  // Posted within moments of each other, the markers overlap: the newest is on top, under the mouse.
  await marker(page, key, 3).hover();
  const tooltip = page.getByRole("tooltip");
  await expect(tooltip).toContainText(`Version 3 of ${key}`);
  await expect(tooltip).toContainText(next[2]!);

  // The ledger below: three packets received, two superseded, newest first.
  await expect(feedItems(page).filter({ hasText: key })).toHaveCount(5);
  await expect(feedItems(page).first()).toContainText("packet superseded by a newer one");

  // The keyboard: one tab stop in the lane (the newest), arrow keys to the others, Enter opens one.
  await marker(page, key, 3).focus();
  await page.keyboard.press("ArrowLeft");
  await expect(marker(page, key, 2)).toBeFocused();
  await expect(tooltip).toContainText(next[1]!);
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(new RegExp(`/threads/${encodeURIComponent(key)}\\?to=${v2.packet_id}$`));
  await expect(page.getByRole("combobox", { name: /^To/ })).toHaveValue(v2.packet_id);
  await expect(page.getByRole("region", { name: "Differences" }).getByRole("insertion")).toHaveText(next[1]!);

  // Live: a new version appears on the lane and in the ledger without a reload, from the stream's
  // delta (no timeline or feed fetch); a click opens it.
  await page.goto(`/timeline?q=${encodeURIComponent(key)}`);
  await expect(page.getByRole("status")).toContainText("live");
  const fetches: string[] = [];
  page.on("request", (sent) => {
    if (new URL(sent.url()).pathname.startsWith("/api/v1/timeline")) fetches.push(sent.url());
  });
  const v4 = await post(3);
  await expect(versionMarkers(page, key)).toHaveCount(4, { timeout: LIVE_TIMEOUT_MS });
  await expect(feedItems(page).filter({ hasText: key })).toHaveCount(7, { timeout: LIVE_TIMEOUT_MS });
  expect(fetches).toEqual([]);
  await expect(marker(page, key, 4)).toHaveAccessibleName(new RegExp(`^Version 4 of ${key}: critical, `));
  await marker(page, key, 4).click();
  await expect(page).toHaveURL(new RegExp(`/threads/${encodeURIComponent(key)}\\?to=${v4.packet_id}$`));
});
