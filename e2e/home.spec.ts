import type { Locator } from "@playwright/test";
import { expect, test } from "./support/fixtures";
import { packetFor, storePacket, uniqueId, type IngestResult } from "./support/api";
import { card, cardsIn } from "./support/board";

/**
 * The first page is the board: each card shows its thread's next action, highest
 * severity and flags in words. Each test opens the board filtered to its own
 * threads (`?q=`), since the columns are virtualised and shared by every spec.
 */

/** The flags a card shows, as people read them: "Title: reason". */
function flagItems(cardLocator: Locator): Locator {
  return cardLocator.getByRole("list", { name: "Flags" }).getByRole("listitem");
}

const flagText = (title: string, result: IngestResult, code: string) =>
  `${title}: ${result.flags.find((flag) => flag.code === code)?.reason ?? `(no ${code} flag)`}`;

/** Packets posted over HTTP without their reports: the verdict was not sent, a flag like any other (decision 051), not a setup notice. */
const noVerdict = (result: IngestResult) => flagText("No verdict", result, "verdict_missing");

test("each card shows its next action, its highest severity and its flags with their reasons", async ({ page, request, agentToken }) => {
  const run = uniqueId("home");
  const dirtyKey = `${run}-dirty`;
  const dirty = await storePacket(
    request,
    agentToken,
    packetFor(dirtyKey, {
      open_risks: [
        { severity: "low", detail: "the log line is noisy" },
        { severity: "blocker", detail: "prod plan destroys 3 resources" },
        { severity: "warning", detail: "the plan is 2 days old" },
      ],
      next_action: `review the prod plan of ${dirtyKey} with a human`,
      clean_state: [
        { check: "working_tree", detail: "infra/prod/vpc.tf modified and not committed" },
        { check: "temp_artifacts", detail: "plan.tfplan.tmp left behind" },
      ],
      questions_for_human: [{ id: "q1", question: "Apply to prod today?", blocking: true }],
    }),
  );
  const unratedKey = `${run}-unrated`;
  const unrated = await storePacket(
    request,
    agentToken,
    packetFor(unratedKey, { open_risks: ["two imports still use the old path"], next_action: `fix the imports of ${unratedKey}` }),
  );
  const quietKey = `${run}-quiet`;
  const quiet = await storePacket(request, agentToken, packetFor(quietKey, { open_risks: [], next_action: `open a pull request for ${quietKey}` }));

  await page.goto(`/?q=${encodeURIComponent(run)}`);
  await expect(page.getByRole("link", { name: "Baton" })).toBeVisible();
  await expect(page.getByTestId("board-card")).toHaveCount(3);

  const dirtyCard = card(page, dirtyKey);
  await expect(cardsIn(page, "Needs you")).toHaveAttribute("data-thread-key", dirtyKey);
  await expect(dirtyCard.getByText(`review the prod plan of ${dirtyKey} with a human`, { exact: true })).toBeVisible();
  await expect(dirtyCard.getByText("critical", { exact: true })).toBeVisible();
  for (const lower of ["low", "medium", "no risks"]) await expect(dirtyCard.getByText(lower, { exact: true })).toHaveCount(0);
  await expect(dirtyCard.getByLabel("Open risks by severity")).toHaveText("1 critical, 1 medium, 1 low");
  await expect(dirtyCard.getByRole("list", { name: "Needs you because" }).getByRole("listitem")).toHaveText(["Dirty workbench", "1 unanswered question", "1 critical/high risk not acknowledged"]);
  await expect(dirtyCard.getByText("verdict: missing", { exact: true })).toBeVisible();
  await expect(flagItems(dirtyCard)).toHaveText([
    flagText("Dirty workbench", dirty, "dirty_state"),
    flagText("Open questions", dirty, "open_questions"),
    noVerdict(dirty),
  ]);
  await expect(flagItems(dirtyCard).nth(2)).toContainText("verdict not sent");
  await expect(flagItems(dirtyCard).first()).toContainText(
    "Clean-state check found 2 blocking problems: infra/prod/vpc.tf modified and not committed; plan.tfplan.tmp left behind.",
  );
  await expect(flagItems(dirtyCard).nth(1)).toContainText("1 question for a person, 1 blocking");

  const unratedCard = card(page, unratedKey);
  await expect(cardsIn(page, "Ready").and(unratedCard)).toHaveCount(1);
  await expect(unratedCard.getByText(`fix the imports of ${unratedKey}`, { exact: true })).toBeVisible();
  await expect(unratedCard.getByText("medium", { exact: true })).toBeVisible();
  await expect(flagItems(unratedCard)).toHaveText([flagText("Unknown severity", unrated, "unknown_severity"), noVerdict(unrated)]);
  await expect(flagItems(unratedCard).first()).toContainText("1 risk without a recognised severity (none given), shown as medium.");

  const quietCard = card(page, quietKey);
  await expect(cardsIn(page, "Ready").and(quietCard)).toHaveCount(1);
  await expect(quietCard.getByText(`open a pull request for ${quietKey}`, { exact: true })).toBeVisible();
  await expect(quietCard.getByText("no risks", { exact: true })).toBeVisible();
  await expect(quietCard.getByText("no open risks", { exact: true })).toBeVisible();
  // Its one flag: the verdict its pointer names was not sent (not a needs-a-person flag: it stays in Ready).
  await expect(flagItems(quietCard)).toHaveText([noVerdict(quiet)]);
});

test("a thread without a next action says so, with the flag's reason, and needs a person", async ({ page, request, agentToken }) => {
  const key = uniqueId("home-sentinel");
  const result = await storePacket(request, agentToken, {
    thread: key,
    agent: `${key}-agent`,
    summary: "task T-040: review=None, gate=None",
    changed_files: [],
    commands_run: [],
    failed_attempts: [],
    open_risks: [{ severity: "high", detail: "nobody knows what comes next" }],
    next_action: "no next_action recorded; needs human",
    verdict_pointer: { verdict: "outputs/verification/T-040.json" },
  });
  await page.goto(`/?q=${encodeURIComponent(key)}`);
  const found = card(page, key);
  await expect(cardsIn(page, "Needs you").and(found)).toHaveCount(1);
  await expect(found).toHaveAccessibleName(new RegExp(`${key}-agent.*No next action recorded`));
  await expect(found.getByText("No next action recorded", { exact: true })).toBeVisible();
  await expect(found.getByText("high", { exact: true })).toBeVisible();
  await expect(flagItems(found)).toHaveText([flagText("No next action", result, "missing_next_action"), noVerdict(result)]);
  await expect(flagItems(found).first()).toContainText('next_action is the generator\'s placeholder "needs human"');
});

test("only the active version of a thread is shown, and archived threads are not", async ({ page, request, agentToken }) => {
  const key = uniqueId("home-versions");
  await storePacket(request, agentToken, packetFor(key, { next_action: `old step of ${key}`, created_at: new Date(Date.now() - 60_000).toISOString() }));
  await storePacket(request, agentToken, packetFor(key, { next_action: `new step of ${key}`, created_at: new Date().toISOString() }));
  const archivedKey = uniqueId("home-archived");
  await storePacket(request, agentToken, packetFor(archivedKey, { status: "archived", next_action: `nothing left for ${archivedKey}` }));

  await page.goto(`/?q=${encodeURIComponent(key)}`);
  await expect(page.getByTestId("board-card")).toHaveCount(1);
  const found = card(page, key);
  await expect(found.getByText(`new step of ${key}`, { exact: true })).toBeVisible();
  await expect(page.getByText(`old step of ${key}`)).toHaveCount(0);

  await page.goto(`/?q=${encodeURIComponent(archivedKey)}`);
  await expect(page.getByRole("region", { name: /^Ready/ })).toBeVisible();
  await expect(page.getByTestId("board-card")).toHaveCount(0);
  await expect(page.getByText(`nothing left for ${archivedKey}`)).toHaveCount(0);
  await expect(page.getByRole("status").filter({ hasText: "threads" })).toContainText("0 threads");
});
