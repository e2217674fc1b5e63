import { expect, type APIRequestContext, type Locator, type Page } from "@playwright/test";
import type { BoardCardDto, BoardDto } from "../../lib/board/dto";
import { getJson } from "./api";

export type { BoardCardDto, BoardDto };

/** The board's columns, left to right, as their headings read. */
export const COLUMN_TITLES = ["Running", "Needs you", "Ready", "Intervened", "Approved", "Stale"] as const;
export type ColumnTitle = (typeof COLUMN_TITLES)[number];

/** GET /api/v1/board with the board's filters (the same module places the page's cards). */
export function getBoard(request: APIRequestContext, token: string, filters: Record<string, string> = {}): Promise<BoardDto> {
  const query = new URLSearchParams(filters).toString();
  return getJson<BoardDto>(request, token, `/api/v1/board${query ? `?${query}` : ""}`);
}

/** The board's column of that title: a region labelled by its heading. */
export function column(page: Page, title: ColumnTitle): Locator {
  return page.getByRole("region", { name: new RegExp(`^${title}\\b`) });
}

/** The count in a column's header, read from its label ("N cards"). */
export async function columnCount(page: Page, title: ColumnTitle): Promise<number> {
  const label = await column(page, title).getByLabel(/^\d+ cards?$/).getAttribute("aria-label");
  return Number(/^(\d+) cards?$/.exec(label ?? "")?.[1] ?? Number.NaN);
}

/** The cards a column has in the DOM now (the list is virtualised: only those near the view). */
export function cardsIn(page: Page, title: ColumnTitle): Locator {
  return column(page, title).getByRole("list", { name: `${title} cards` }).getByTestId("board-card");
}

/** A thread's card anywhere on the board. */
export function card(page: Page, key: string): Locator {
  return page.getByTestId("board-card").and(page.locator(`[data-thread-key="${cssString(key)}"]`));
}

/** The thread keys of the cards a column has in the DOM, top to bottom. */
export async function renderedKeys(page: Page, title: ColumnTitle): Promise<string[]> {
  const cards = cardsIn(page, title);
  const keys: { key: string; top: number }[] = [];
  for (const element of await cards.all()) {
    const key = await element.getAttribute("data-thread-key");
    const box = await element.boundingBox();
    keys.push({ key: key!, top: box?.y ?? 0 });
  }
  return keys.sort((a, b) => a.top - b.top).map((entry) => entry.key);
}

/** The thread key of the card whose link has the focus, or null when no card's link has it. */
export function focusedKey(page: Page): Promise<string | null> {
  return page.evaluate(() => {
    const active = document.activeElement;
    return active?.tagName === "A" ? (active.closest('[data-testid="board-card"]')?.getAttribute("data-thread-key") ?? null) : null;
  });
}

/** Waits until the board's status says that the live stream is open. */
export async function waitForLive(page: Page): Promise<void> {
  await expect(page.getByRole("status").filter({ hasText: /threads? ·/ })).toContainText("live", { timeout: 10_000 });
}

/** A key inside a CSS attribute selector's double quotes. */
function cssString(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"');
}

/** Which column a card's data puts it in, by the rules of docs/product.md#columns, for a board without decisions or heartbeats. */
export function expectedColumnFromData(cardData: BoardCardDto | { active_packet: BoardCardDto["active_packet"] }): ColumnTitle {
  const packet = cardData.active_packet;
  const needsPerson = ["open_questions", "missing_next_action", "dirty_state", "verdict_failed"];
  if (packet.flags.some((flag) => needsPerson.includes(flag.code))) return "Needs you";
  if (packet.risk_counts.critical + packet.risk_counts.high > 0) return "Needs you";
  return "Ready";
}

/** The column title of a board API column id. */
export function titleOf(id: BoardDto["columns"][number]["id"]): ColumnTitle {
  return ({ running: "Running", needs_you: "Needs you", ready: "Ready", intervened: "Intervened", approved: "Approved", stale: "Stale" } as const)[id];
}
