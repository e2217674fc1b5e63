import type { Locator } from "@playwright/test";
import { expect, test } from "./support/fixtures";
import { packetFor, storePacket, uniqueId } from "./support/api";
import { card } from "./support/board";

/**
 * Agent text is shown bidi-safe (docs/decisions/034-agent-text.md): isolated from the
 * page around it, and a right-to-left override or a zero-width space shows as a visible
 * marker instead of reordering or hiding text.
 */

const RLO = "\u202E";
const ZWSP = "\u200B";

/** The isolated element that shows `text` (as markers), with the markers it holds. */
async function expectIsolatedWithMarkers(scope: Locator, shown: string): Promise<void> {
  const isolated = scope.locator("bdi[data-agent-text]").filter({ hasText: shown });
  await expect(isolated).toHaveCount(1);
  await expect(isolated).toHaveAttribute("dir", "auto");
  // <bdi> isolates by itself; the computed style says so, whatever a stylesheet did.
  expect(await isolated.evaluate((element) => getComputedStyle(element).unicodeBidi)).toBe("isolate");
  await expect(isolated.locator('[data-invisible="U+202E"]')).toHaveText("⟨U+202E⟩");
  await expect(isolated.locator('[data-invisible="U+202E"]')).toHaveAttribute("title", "U+202E RIGHT-TO-LEFT OVERRIDE");
  await expect(isolated.locator('[data-invisible="U+200B"]')).toHaveText("⟨U+200B⟩");
  // The raw characters are gone from what is rendered: nothing left to reorder or hide text.
  const text = (await isolated.textContent()) ?? "";
  expect(text).not.toContain(RLO);
  expect(text).not.toContain(ZWSP);
}

test("a next action with a right-to-left override and a zero-width space shows visible markers, isolated, on the board and the thread page", async ({
  page,
  request,
  agentToken,
}) => {
  const key = uniqueId("bidi");
  const nextAction = `rename invoice${RLO}gnp.exe to${ZWSP} ${key}`;
  await storePacket(request, agentToken, packetFor(key, { next_action: nextAction }));
  const shown = `rename invoice⟨U+202E⟩gnp.exe to⟨U+200B⟩ ${key}`;

  await page.goto(`/?q=${encodeURIComponent(key)}`);
  const boardCard = card(page, key);
  await expect(boardCard).toBeVisible();
  await expectIsolatedWithMarkers(boardCard, shown);
  // The card's accessible name shows the markers too, not the raw characters.
  await expect(boardCard.getByRole("link")).toHaveAccessibleName(new RegExp(`${shown.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));

  await page.goto(`/threads/${encodeURIComponent(key)}`);
  await expectIsolatedWithMarkers(page.getByRole("region", { name: "Next action" }), shown);
});
