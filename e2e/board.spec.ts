import { execFileSync } from "node:child_process";
import type { APIRequestContext, Page } from "@playwright/test";
import { expect, test } from "./support/fixtures";
import { E2E_DATABASE_URL } from "./support/paths";
import { getJson, packetFor, storePacket, storePackets, threadPath, uniqueId, type IngestResult, type ThreadDetailDto } from "./support/api";
import {
  card,
  cardsIn,
  column,
  columnCount,
  COLUMN_TITLES,
  expectedColumnFromData,
  focusedKey,
  getBoard,
  renderedKeys,
  titleOf,
  waitForLive,
  type BoardCardDto,
  type BoardDto,
  type ColumnTitle,
} from "./support/board";

/**
 * The board (`/`): six columns decided by lib/board/columns.ts, filters in the URL,
 * keyboard navigation, live updates and the theme.
 *
 * Not covered here: the Stale column. Staleness is measured from the active packet's
 * RECEIVED time (Baton's clock), which no API can backdate, and the demo fleet is
 * received now; lib/board/columns.test.ts covers the rule. Running, Intervened and
 * Approved need heartbeats and decisions, which do not exist yet.
 */

const DEMO_PROJECTS = ["acme/payments", "acme/web", "acme/platform", "acme/mobile", "acme/data"];
const DEMO_AGENT = /^(payments|web|platform|mobile|data)-(builder|fixer|reviewer|migrator|tester|docs|infra)-\d+$/;

function cardsOf(board: BoardDto): (BoardCardDto & { title: ColumnTitle })[] {
  return board.columns.flatMap((col) => col.cards.map((c) => ({ ...c, title: titleOf(col.id) })));
}

async function expectCountsMatch(page: Page, board: BoardDto): Promise<void> {
  for (const col of board.columns) {
    await expect.poll(() => columnCount(page, titleOf(col.id)), { message: `${col.title} count` }).toBe(col.count);
  }
}

test.describe("the demo fleet", () => {
  let demo: (BoardCardDto & { title: ColumnTitle })[] = [];

  test.beforeAll(async () => {
    const output = execFileSync("node", ["bin/baton.js", "demo"], {
      env: { ...process.env, DATABASE_URL: E2E_DATABASE_URL },
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    expect(output).toMatch(/demo fleet: 34 agents, 34 threads, \d+ new versions stored/);
  });

  test.beforeEach(async ({ request, agentToken }) => {
    demo = cardsOf(await getBoard(request, agentToken)).filter((c) => DEMO_PROJECTS.includes(c.project ?? "") && DEMO_AGENT.test(c.agent ?? ""));
    expect(demo).toHaveLength(34);
  });

  test("each demo card sits in the column the rules give for its data, in the API and in the browser", async ({
    page,
    request,
    agentToken,
  }) => {
    // Independently of lib/board: from each thread's stored flags and risk counts (no demo packet has a workspace root).
    for (const c of demo) {
      const detail = await getJson<ThreadDetailDto>(request, agentToken, threadPath(c.key));
      expect(c.title, `${c.key}: ${JSON.stringify(detail.active_packet.flags.map((flag) => flag.code))}`).toBe(expectedColumnFromData(detail));
    }
    const byTitle = (title: ColumnTitle) => demo.filter((c) => c.title === title);
    expect(byTitle("Needs you").length).toBeGreaterThan(0);
    expect(byTitle("Ready").length).toBeGreaterThan(0);
    // Every demo packet was received now: none is stale, and nothing has heartbeats or decisions yet.
    for (const title of ["Stale", "Running", "Approved", "Intervened"] as const) expect(byTitle(title)).toEqual([]);

    // A few concrete ones, found by their data.
    const withQuestions = demo.find((c) => c.active_packet.flags.some((flag) => flag.code === "open_questions"))!;
    const withoutNextAction = demo.find((c) => c.active_packet.next_action === null)!;
    const critical = demo.find((c) => c.active_packet.risk_counts.critical > 0 && c.active_packet.flags.every((flag) => flag.code !== "open_questions"))!;
    const needsPerson = ["open_questions", "missing_next_action", "dirty_state", "verdict_failed"];
    const clean = demo.find(
      (c) =>
        c.active_packet.risk_counts.critical + c.active_packet.risk_counts.high === 0 &&
        c.active_packet.flags.every((flag) => !needsPerson.includes(flag.code)),
    )!;
    for (const [which, expected] of [
      [withQuestions, "Needs you"],
      [withoutNextAction, "Needs you"],
      [critical, "Needs you"],
      [clean, "Ready"],
    ] as const) {
      expect(which, `a demo thread for ${expected}`).toBeDefined();
      await page.goto(`/?agent=${encodeURIComponent(which.agent!)}`);
      await expect(cardsIn(page, expected)).toHaveCount(1);
      await expect(cardsIn(page, expected)).toHaveAttribute("data-thread-key", which.key);
      expect(await columnCount(page, expected)).toBe(1);
      // What the card says about it, on the page already loaded for it.
      if (which === withQuestions) await expect(card(page, which.key).getByRole("list", { name: "Needs you because" })).toContainText(/\d+ questions? for you/);
      if (which === withoutNextAction) await expect(card(page, which.key).getByText("No next action recorded", { exact: true })).toBeVisible();
    }

    // Per project (few enough cards that a tall window renders them all): the browser shows exactly the API's columns, in order.
    await page.setViewportSize({ width: 1800, height: 2600 });
    for (const project of DEMO_PROJECTS) {
      // The API's board and the page's are two reads: a card that moved between them (seen once
      // in CI: two Needs-you cards in the other order) is read again by both, until they agree.
      await expect(async () => {
        const board = await getBoard(request, agentToken, { project });
        await page.goto(`/?project=${encodeURIComponent(project)}`);
        await expectCountsMatch(page, board);
        for (const col of board.columns) {
          await expect(cardsIn(page, titleOf(col.id))).toHaveCount(col.count);
          expect(await renderedKeys(page, titleOf(col.id)), `${project}, ${col.title}`).toEqual(col.cards.map((c) => c.key));
        }
      }).toPass({ timeout: 30_000 });
    }
  });

  test("unfiltered, the header counts match the API and every rendered card is in the API's column for it", async ({
    page,
    request,
    agentToken,
  }) => {
    await page.goto("/");
    const board = await getBoard(request, agentToken);
    await expectCountsMatch(page, board);
    const columnOf = new Map(cardsOf(board).map((c) => [c.key, c.title]));
    let seen = 0;
    for (const title of COLUMN_TITLES) {
      for (const key of await renderedKeys(page, title)) {
        expect(columnOf.get(key), key).toBe(title);
        seen++;
      }
    }
    expect(seen).toBeGreaterThan(0);
    await expect(page.getByRole("status").filter({ hasText: "threads" })).toContainText(`${board.total} threads`);
  });
});

test.describe("filters live in the URL", () => {
  test("agent, severity, and flag with free text show only the matching cards", async ({ page, request, agentToken }) => {
    const run = uniqueId("filters");
    const agentA = `${run}-agent-a`;
    const agentB = `${run}-agent-b`;
    const [critical, low, asking, otherAsking] = (await storePackets(request, agentToken, [
      packetFor(`${run}/critical`, { agent: agentA, open_risks: [{ severity: "critical", detail: "drops the prod table" }], next_action: `fix ${run} critical` }),
      packetFor(`${run}/low`, { agent: agentA, next_action: `tidy ${run} low` }),
      packetFor(`${run}/asking`, { agent: agentB, questions_for_human: [{ id: "q1", question: "Which region?" }], next_action: `ask about ${run}` }),
      packetFor(uniqueId("unrelated"), { agent: uniqueId("other-agent"), questions_for_human: [{ id: "q1", question: "Which region?" }] }),
    ])) as [IngestResult, IngestResult, IngestResult, IngestResult];

    await page.goto(`/?agent=${encodeURIComponent(agentA)}`);
    await expect(page.getByTestId("board-card")).toHaveCount(2);
    await expect(card(page, critical.thread_key)).toBeVisible();
    await expect(card(page, low.thread_key)).toBeVisible();
    await expect(page.getByRole("searchbox", { name: "Agent", exact: true })).toHaveValue(agentA);

    await page.goto("/?severity=critical");
    const criticalBoard = await getBoard(request, agentToken, { severity: "critical" });
    await expectCountsMatch(page, criticalBoard);
    for (const title of COLUMN_TITLES) {
      for (const c of await cardsIn(page, title).all()) await expect(c).toContainText("critical");
    }
    expect(cardsOf(criticalBoard).every((c) => c.active_packet.highest_severity === "critical")).toBe(true);
    await expect(page.getByRole("combobox", { name: /^Severity/ })).toHaveValue("critical");
    await page.goto(`/?severity=critical&q=${encodeURIComponent(run)}`);
    await expect(page.getByTestId("board-card")).toHaveCount(1);
    await expect(card(page, critical.thread_key)).toBeVisible();

    await page.goto(`/?flag=open_questions&q=${encodeURIComponent(run)}`);
    await expect(page.getByTestId("board-card")).toHaveCount(1);
    await expect(card(page, asking.thread_key)).toBeVisible();
    await expect(card(page, otherAsking.thread_key)).toHaveCount(0);
    await expect(page.getByRole("combobox", { name: /^Flag/ })).toHaveValue("open_questions");
    await expect(page.getByRole("searchbox", { name: "Search (/)" })).toHaveValue(run);
  });

  test("typing in Search updates ?q= after the debounce; the Severity select updates ?severity=", async ({ page, request, agentToken }) => {
    const run = uniqueId("typed");
    const [high, quiet] = (await storePackets(request, agentToken, [
      packetFor(`${run}/high`, { open_risks: [{ severity: "high", detail: "retries twice" }], next_action: `retry ${run}` }),
      packetFor(`${run}/quiet`, { open_risks: [], next_action: `ship ${run}` }),
    ])) as [IngestResult, IngestResult];

    await page.goto("/");
    await waitForLive(page);
    await page.getByRole("searchbox", { name: "Search (/)" }).fill(run);
    await expect(page).toHaveURL(new RegExp(`[?&]q=${run}(&|$)`));
    await expect(page.getByTestId("board-card")).toHaveCount(2);
    await expect(card(page, high.thread_key)).toBeVisible();
    await expect(card(page, quiet.thread_key)).toBeVisible();

    await page.getByRole("combobox", { name: /^Severity/ }).selectOption("high");
    await expect(page).toHaveURL(/[?&]severity=high(&|$)/);
    await expect(page).toHaveURL(new RegExp(`[?&]q=${run}(&|$)`));
    await expect(page.getByTestId("board-card")).toHaveCount(1);
    await expect(card(page, high.thread_key)).toBeVisible();
    // The choice stays: the search box's debounce (250 ms) once sent the old severity back.
    await page.waitForTimeout(750);
    await expect(page).toHaveURL(/[?&]severity=high(&|$)/);
    await expect(page.getByRole("combobox", { name: /^Severity/ })).toHaveValue("high");

    // A shared link gives the same view.
    const shared = page.url();
    await page.goto("/");
    await page.goto(shared);
    await expect(page.getByTestId("board-card")).toHaveCount(1);
    await expect(page.getByRole("searchbox", { name: "Search (/)" })).toHaveValue(run);

    await page.getByRole("combobox", { name: /^Severity/ }).selectOption("");
    await expect(page).not.toHaveURL(/severity=/);
    await expect(page.getByTestId("board-card")).toHaveCount(2);
    await page.waitForTimeout(750);
    await expect(page).not.toHaveURL(/severity=/);
    await expect(page.getByTestId("board-card")).toHaveCount(2);
  });
});

test.describe("keyboard", () => {
  /** Two cards in Needs you (critical above high) and two in Ready, alone on the board under `?q=<run>`. */
  async function fourCards(request: APIRequestContext, token: string) {
    const run = uniqueId("keys");
    const cards = [
      ["needs-critical", [{ severity: "critical", detail: "a" }]],
      ["needs-high", [{ severity: "high", detail: "b" }]],
      ["ready-medium", [{ severity: "medium", detail: "c" }]],
      ["ready-low", [{ severity: "low", detail: "d" }]],
    ] as const;
    await storePackets(request, token, cards.map(([name, risks]) => packetFor(`${run}/${name}`, { open_risks: risks, next_action: `step of ${run} ${name}` })));
    const board = await getBoard(request, token, { q: run });
    const needs = board.columns.find((c) => c.id === "needs_you")!.cards.map((c) => c.key);
    const ready = board.columns.find((c) => c.id === "ready")!.cards.map((c) => c.key);
    expect(needs).toEqual([`${run}/needs-critical`, `${run}/needs-high`]);
    expect(ready).toEqual([`${run}/ready-medium`, `${run}/ready-low`]);
    return { run, needs, ready };
  }
  // One seed for the three tests: they move the focus and open a thread, which changes no thread.
  let seeded: Awaited<ReturnType<typeof fourCards>>;
  test.beforeAll(async ({ request, agentToken }) => {
    seeded = await fourCards(request, agentToken);
  });

  test("on a freshly loaded board, / focuses the search box, Escape leaves it, and the first j focuses the first card", async ({ page }) => {
    const { run, needs } = seeded;
    await page.goto(`/?q=${encodeURIComponent(run)}`);
    await waitForLive(page);
    await expect(page.getByTestId("board-card")).toHaveCount(4);
    const search = page.getByRole("searchbox", { name: "Search (/)" });

    // Nothing has the focus yet (document.body): the shortcuts must work from here.
    await page.keyboard.press("/");
    await expect(search).toBeFocused();
    await expect(search).toHaveValue(run);
    await page.keyboard.press("Escape");
    await expect(search).not.toBeFocused();
    // The first move lands on the first card of the first non-empty column (Running is empty).
    await page.keyboard.press("j");
    await expect.poll(() => focusedKey(page)).toBe(needs[0]);
  });

  test("from a card, arrow keys and j/k/h/l move across cards and columns, and Enter opens the thread", async ({ page }) => {
    const { run, needs, ready } = seeded;
    await page.goto(`/?q=${encodeURIComponent(run)}`);
    await waitForLive(page);
    await expect(page.getByTestId("board-card")).toHaveCount(4);
    const search = page.getByRole("searchbox", { name: "Search (/)" });

    // Tab order: the filters, then the first card of each non-empty column.
    await search.focus();
    for (let i = 0; i < 10 && (await focusedKey(page)) === null; i++) await page.keyboard.press("Tab");
    await expect.poll(() => focusedKey(page)).toBe(needs[0]);

    await page.keyboard.press("j");
    await expect.poll(() => focusedKey(page)).toBe(needs[1]);
    await page.keyboard.press("ArrowDown"); // already the last: stays
    await expect.poll(() => focusedKey(page)).toBe(needs[1]);
    await page.keyboard.press("k");
    await expect.poll(() => focusedKey(page)).toBe(needs[0]);
    await page.keyboard.press("l");
    await expect.poll(() => focusedKey(page)).toBe(ready[0]);
    await page.keyboard.press("ArrowDown");
    await expect.poll(() => focusedKey(page)).toBe(ready[1]);
    // Right of Ready every column is empty: the focus stays.
    await page.keyboard.press("ArrowRight");
    await expect.poll(() => focusedKey(page)).toBe(ready[1]);
    await page.keyboard.press("h");
    await expect.poll(() => focusedKey(page)).toBe(needs[1]);
    await page.keyboard.press("ArrowUp");
    await expect.poll(() => focusedKey(page)).toBe(needs[0]);
    await page.keyboard.press("ArrowRight");
    await expect.poll(() => focusedKey(page)).toBe(ready[0]);
    await page.keyboard.press("ArrowLeft");
    await expect.poll(() => focusedKey(page)).toBe(needs[0]);
    // Left of Needs you, Running is empty: the focus stays.
    await page.keyboard.press("h");
    await expect.poll(() => focusedKey(page)).toBe(needs[0]);

    // Enter on a focused card opens its thread.
    await page.keyboard.press("l");
    await page.keyboard.press("j");
    await expect.poll(() => focusedKey(page)).toBe(ready[1]);
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(`/threads/${encodeURIComponent(ready[1]!)}`);
    await expect(page.getByRole("heading", { name: "Next action" })).toBeVisible();
    await expect(page.getByText(`step of ${run} ready-low`, { exact: true }).first()).toBeVisible();
  });

  test("from a card, / focuses the search box, keys typed there are text, and Escape leaves it with the filter kept", async ({ page }) => {
    const { run, needs } = seeded;
    await page.goto(`/?q=${encodeURIComponent(run)}`);
    await waitForLive(page);
    await card(page, needs[0]!).getByRole("link").focus();
    const search = page.getByRole("searchbox", { name: "Search (/)" });

    await page.keyboard.press("/");
    await expect(search).toBeFocused();
    await expect(search).toHaveValue(run);
    await page.keyboard.press("End");
    await page.keyboard.press("j");
    await expect(search).toHaveValue(`${run}j`);
    await expect.poll(() => focusedKey(page)).toBe(null);
    await page.keyboard.press("Backspace");
    await expect(search).toHaveValue(run);
    await page.keyboard.press("Escape");
    await expect(search).not.toBeFocused();
    // Leaving the box is not clearing it: the filter, and the URL, stay.
    await expect(search).toHaveValue(run);
    await page.waitForTimeout(600); // longer than the filters' 250 ms debounce
    await expect(page).toHaveURL(new RegExp(`[?&]q=${run}(&|$)`));
    await expect(page.getByTestId("board-card")).toHaveCount(4);
  });
});

test.describe("Needs you at a glance", () => {
  test("is grouped by reason, the most urgent group first, each group with its count", async ({ page, request, agentToken }) => {
    const run = uniqueId("groups");
    // Ordered by severity alone these would read risk, dirty, question: the question would sink.
    await storePackets(request, agentToken, [
      packetFor(`${run}/dirty`, { clean_state: [{ check: "working_tree", detail: "a.ts modified" }] }),
      packetFor(`${run}/risk`, { open_risks: [{ severity: "critical", detail: "drops a table" }] }),
      packetFor(`${run}/question`, { open_risks: [], questions_for_human: [{ question: "Which region?", blocking: true }] }),
    ]);
    await page.goto(`/?q=${encodeURIComponent(run)}`);
    await expect(cardsIn(page, "Needs you")).toHaveCount(3);
    const headings = column(page, "Needs you").getByRole("heading", { level: 3 });
    await expect(headings).toHaveText(["Waiting on your answer 1 card", "Critical or high risk to triage 1 card", "Handoff incomplete 1 card"]);
    expect(await renderedKeys(page, "Needs you")).toEqual([`${run}/question`, `${run}/risk`, `${run}/dirty`]);
    await expect(card(page, `${run}/question`).getByRole("list", { name: "Needs you because" })).toHaveText("1 question for you");
  });

  test("Back from a thread puts Needs you where it was scrolled to, with the filters", async ({ page, request, agentToken }) => {
    const run = uniqueId("back");
    await storePackets(
      request,
      agentToken,
      Array.from({ length: 24 }, (_, index) => packetFor(`${run}/${String(index).padStart(2, "0")}`, { open_risks: [{ severity: "high", detail: "a" }] })),
    );
    await page.setViewportSize({ width: 1280, height: 600 });
    await page.goto(`/?q=${encodeURIComponent(run)}`);
    const list = column(page, "Needs you").getByRole("list", { name: "Needs you cards" });
    // The whole column, not the first paint's first cards: its height is what is scrolled.
    await expect(column(page, "Needs you").getByRole("heading", { level: 3 })).toContainText("24 cards");
    await expect.poll(() => list.evaluate((element) => element.scrollHeight - element.clientHeight)).toBeGreaterThan(200);
    // Halfway down: a position the first screenful does not have.
    const offset = await list.evaluate((element) => Math.floor((element.scrollHeight - element.clientHeight) / 2));
    expect(offset).toBeGreaterThan(100);
    await list.evaluate((element, top) => element.scrollTo({ top }), offset);
    await expect.poll(() => list.evaluate((element) => element.scrollTop)).toBe(offset);
    // Opened from the keyboard: a click would first scroll its card fully into view.
    const opened = cardsIn(page, "Needs you").last();
    const key = await opened.getAttribute("data-thread-key");
    await opened.getByRole("link").evaluate((link) => link.focus({ preventScroll: true }));
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(`/threads/${encodeURIComponent(key!)}`);
    await page.goBack();
    await expect(page).toHaveURL(new RegExp(`[?&]q=${run}(&|$)`));
    await expect(page.getByRole("searchbox", { name: "Search (/)" })).toHaveValue(run);
    await expect.poll(() => list.evaluate((element) => element.scrollTop)).toBe(offset);
    // The card that was opened is where the keyboard is again: focused, and j moves on from it.
    await expect(page.locator(`[data-testid="board-card"][data-thread-key="${key}"]`).getByRole("link").first()).toBeFocused();
    expect(await list.evaluate((element) => element.scrollTop)).toBe(offset);
  });

  test("the list view, kept in the URL, approves picked Ready threads after one confirmation and says which did not go through", async ({
    page,
    request,
    agentToken,
  }) => {
    const run = uniqueId("bulk");
    const keys = ["a", "b", "c"].map((name) => `${run}/${name}`);
    await storePackets(request, agentToken, [
      ...keys.map((key) => packetFor(key, { agent: `${run}-${key.at(-1)}`, open_risks: [] })),
      packetFor(`${run}/needs`, { open_risks: [{ severity: "critical", detail: "x" }] }),
    ]);
    await page.goto(`/?q=${encodeURIComponent(run)}`);
    await page.getByRole("button", { name: "list" }).click();
    await expect(page).toHaveURL(/[?&]view=list(&|$)/);
    await expect(page.getByTestId("board-row")).toHaveCount(4);
    // The Agent header sorts the rows within each group, from the keyboard, and the sort stays in the URL.
    const readyAgents = () => page.locator('tbody[data-group="ready"] [data-testid="board-row"]').evaluateAll((rows) => rows.map((row) => row.getAttribute("data-thread-key")));
    const agentHeader = page.getByRole("columnheader", { name: /^Agent/ });
    await agentHeader.getByRole("button").focus();
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(/[?&]sort=agent(&|$)/);
    await expect(agentHeader).toHaveAttribute("aria-sort", "ascending");
    await expect.poll(readyAgents).toEqual(keys);
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(/[?&]sort=-agent(&|$)/);
    await expect.poll(readyAgents).toEqual([...keys].reverse());
    await page.keyboard.press("Enter");
    await expect(agentHeader).toHaveAttribute("aria-sort", "none");
    // Only clean handoffs can be picked; anything that needs a person is looked at one by one.
    await expect(page.getByRole("checkbox", { name: /^Pick .*needs\)$/ })).toHaveCount(0);
    await page.getByRole("checkbox", { name: "Pick all 3 in Ready" }).check();
    await page.getByRole("button", { name: "Approve 3 threads…" }).click();
    await expect(page.getByRole("group", { name: "Bulk approve" }).getByRole("alert")).toContainText("Approve 3 threads as you see them now?");
    // Someone moves one thread on between the look and the confirmation: a newer packet arrives.
    await storePacket(request, agentToken, packetFor(keys[2]!, { agent: `${run}-c`, open_risks: [], next_action: `changed ${run}` }));
    await page.getByRole("button", { name: "Yes, approve 3" }).click();
    const result = page.getByTestId("bulk-result");
    await expect(result).toContainText("2 threads approved; 1 thread not:");
    await expect(result.getByRole("listitem")).toHaveCount(1);
    await expect(result.getByRole("listitem")).toContainText(`${run}-c: someone acted on it first or a newer packet arrived`);
    const board = await getBoard(request, agentToken, { q: run });
    const approved = board.columns.find((c) => c.id === "approved")!.cards.map((c) => c.key).sort();
    expect(approved).toEqual([keys[0], keys[1]]);
    // The view stays a list after a reload.
    await page.reload();
    await expect(page.getByRole("button", { name: "list" })).toHaveAttribute("aria-pressed", "true");
  });

  test("on a phone the filters but Search sit behind one button that says how many are active; the list view stacks", async ({ page, request, agentToken }) => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto("/?severity=high&agent=nobody-at-all");
    const button = page.getByRole("button", { name: "Filters (2 active)" });
    await expect(button).toHaveAttribute("aria-expanded", "false");
    await expect(page.getByRole("searchbox", { name: "Search (/)" })).toBeVisible();
    await expect(page.getByRole("searchbox", { name: "Agent", exact: true })).toBeHidden();
    await button.click();
    await expect(button).toHaveAttribute("aria-expanded", "true");
    await expect(page.getByRole("searchbox", { name: "Agent", exact: true })).toHaveValue("nobody-at-all");
    await expect(page.getByRole("combobox", { name: /^Severity/ })).toHaveValue("high");
    // Nothing runs off the side.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    // The list view stacks its rows: neither the page nor the list scrolls sideways.
    const key = uniqueId("phone-list");
    await storePacket(request, agentToken, packetFor(key, { agent: `${key}-agent`, next_action: `look at the phone list of ${key} before the release` }));
    await page.goto(`/?view=list&q=${encodeURIComponent(key)}`);
    await expect(page.getByTestId("board-row")).toHaveCount(1);
    const widths = await page.evaluate(() => {
      const list = document.querySelector("[aria-label='Board as a list'] table")!.parentElement!;
      return { page: document.documentElement.scrollWidth, view: window.innerWidth, list: list.scrollWidth, listBox: list.clientWidth };
    });
    expect(widths.page).toBeLessThanOrEqual(widths.view);
    expect(widths.list).toBeLessThanOrEqual(widths.listBox);
  });
});

test("a packet posted while the board is open appears without reload, and its column's count goes up", async ({
  page,
  request,
  agentToken,
}) => {
  await page.goto("/");
  await waitForLive(page);
  const before = await columnCount(page, "Needs you");
  const agent = uniqueId("live-agent");
  const key = uniqueId("live");
  // A question (the first group), critical and newest: first in Needs you, so rendered even in a long virtualised column.
  await storePacket(
    request,
    agentToken,
    packetFor(key, {
      agent,
      open_risks: [{ severity: "critical", detail: "posted while watching" }],
      questions_for_human: [{ question: "Go on?", blocking: true }],
      next_action: `look at ${key} now`,
    }),
  );
  await expect(card(page, key)).toBeVisible({ timeout: 5_000 });
  await expect(card(page, key).getByRole("link")).toHaveAccessibleName(new RegExp(`${agent}.*look at ${key} now`));
  await expect(cardsIn(page, "Needs you").filter({ has: page.getByText(agent, { exact: true }) })).toHaveCount(1);
  await expect.poll(() => columnCount(page, "Needs you"), { timeout: 5_000 }).toBe(before + 1);
  // No reload happened: the page's first navigation is the only one.
  expect(await page.evaluate(() => performance.getEntriesByType("navigation").length)).toBe(1);
});

test("the theme follows the system by default; the toggle picks light or dark, and a reload keeps it", async ({ page }) => {
  const html = page.locator("html");
  const canvas = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await page.emulateMedia({ colorScheme: "dark" });
  await page.goto("/");
  const theme = page.getByRole("combobox", { name: "Theme" });
  await expect(theme).toHaveValue("system");
  await expect(html).not.toHaveClass(/(^|\s)(dark|light)(\s|$)/);
  const systemDark = await canvas();
  await theme.selectOption("light");
  await expect(html).toHaveClass(/(^|\s)light(\s|$)/);
  expect(await canvas()).not.toBe(systemDark);
  await page.reload();
  await expect(html).toHaveClass(/(^|\s)light(\s|$)/);
  await expect(theme).toHaveValue("light");
  await theme.selectOption("dark");
  await expect(html).toHaveClass(/(^|\s)dark(\s|$)/);
  expect(await canvas()).toBe(systemDark);
  await page.reload();
  await expect(html).toHaveClass(/(^|\s)dark(\s|$)/);
  await theme.selectOption("system");
  await expect(html).not.toHaveClass(/(^|\s)(dark|light)(\s|$)/);
  await page.reload();
  await expect(theme).toHaveValue("system");
});
