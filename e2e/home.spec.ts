import type { Locator } from "@playwright/test";
import { expect, test } from "./support/fixtures";
import { packetFor, storePacket, uniqueId, type IngestResult } from "./support/api";
import { card, cardsIn } from "./support/board";

/**
 * The first page is the board: each card shows who, its next action and why it needs a
 * person (reasons as chips, each flag's reason in the chip's title), or the risks and
 * verdict a person approves on. Each test opens the board filtered to its own
 * threads (`?q=`), since the columns are virtualised and shared by every spec.
 */

/** The reasons a card of Needs you gives, as chips. */
function reasonChips(cardLocator: Locator): Locator {
  return cardLocator.getByRole("list", { name: "Needs you because" }).getByRole("listitem");
}

/** The reason the ingest gave a flag: a chip's title (these reasons do not repeat their title). */
const reasonOf = (result: IngestResult, code: string) => result.flags.find((flag) => flag.code === code)?.reason ?? `(no ${code} flag)`;

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
  await storePacket(
    request,
    agentToken,
    packetFor(unratedKey, { open_risks: ["two imports still use the old path"], next_action: `fix the imports of ${unratedKey}` }),
  );
  const quietKey = `${run}-quiet`;
  await storePacket(request, agentToken, packetFor(quietKey, { open_risks: [], next_action: `open a pull request for ${quietKey}` }));

  await page.goto(`/?q=${encodeURIComponent(run)}`);
  await expect(page.getByRole("link", { name: "Baton" })).toBeVisible();
  await expect(page.getByTestId("board-card")).toHaveCount(3);

  const dirtyCard = card(page, dirtyKey);
  await expect(cardsIn(page, "Needs you")).toHaveAttribute("data-thread-key", dirtyKey);
  await expect(dirtyCard.getByText(`review the prod plan of ${dirtyKey} with a human`, { exact: true })).toBeVisible();
  await expect(dirtyCard.getByText("critical", { exact: true })).toBeVisible();
  for (const lower of ["low", "medium", "no risks"]) await expect(dirtyCard.getByText(lower, { exact: true })).toHaveCount(0);
  // Needs you says why in chips; the counts and the verdict are the thread page's.
  await expect(reasonChips(dirtyCard)).toHaveText(["Dirty workbench", "1 question for you", "1 critical/high risk to triage"]);
  await expect(reasonChips(dirtyCard).first()).toHaveAttribute("title", reasonOf(dirty, "dirty_state"));
  await expect(reasonChips(dirtyCard).first()).toHaveAttribute(
    "title",
    /Clean-state check found 2 blocking problems: infra\/prod\/vpc.tf modified and not committed; plan.tfplan.tmp left behind./,
  );
  await expect(reasonChips(dirtyCard).nth(1)).toHaveAttribute("title", /1 question for a person, 1 blocking/);
  // The question comes first: the card sits in the group of people waited on.
  await expect(page.getByRole("heading", { name: /^Waiting on your answer/ })).toContainText("1 card");

  const unratedCard = card(page, unratedKey);
  await expect(cardsIn(page, "Ready").and(unratedCard)).toHaveCount(1);
  await expect(unratedCard.getByText(`fix the imports of ${unratedKey}`, { exact: true })).toBeVisible();
  await expect(unratedCard.getByText("medium", { exact: true })).toBeVisible();
  await expect(unratedCard.getByLabel("Open risks by severity")).toHaveText("1 medium");
  await expect(unratedCard.getByText("Unknown severity", { exact: true })).toHaveAttribute("title", /1 risk without a recognised severity \(none given\), shown as medium./);
  await expect(unratedCard.getByText("verdict: missing", { exact: true })).toBeVisible();
  // The verdict its pointer names was not sent: a flag that needs nobody (it stays in Ready).
  await expect(unratedCard.getByText("No verdict", { exact: true })).toHaveAttribute("title", /verdict not sent/);

  const quietCard = card(page, quietKey);
  await expect(cardsIn(page, "Ready").and(quietCard)).toHaveCount(1);
  await expect(quietCard.getByText(`open a pull request for ${quietKey}`, { exact: true })).toBeVisible();
  await expect(quietCard.getByText("no risks", { exact: true })).toBeVisible();
  await expect(quietCard.getByText("no open risks", { exact: true })).toBeVisible();
  await expect(quietCard.getByText(/^no open risks · verdict: missing · No verdict$/)).toBeVisible();
  await expect(quietCard.getByRole("list", { name: "Needs you because" })).toHaveCount(0);
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
  await expect(found.getByRole("link")).toHaveAccessibleName(new RegExp(`${key}-agent.*No next action recorded`));
  await expect(found.getByText("No next action recorded", { exact: true })).toBeVisible();
  await expect(found.getByText("high", { exact: true })).toBeVisible();
  await expect(reasonChips(found)).toHaveText(["No next action", "1 critical/high risk to triage"]);
  await expect(reasonChips(found).first()).toHaveAttribute("title", reasonOf(result, "missing_next_action"));
  await expect(reasonChips(found).first()).toHaveAttribute("title", /next_action is the generator's placeholder "needs human"/);
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
