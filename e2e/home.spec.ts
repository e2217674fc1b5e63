import type { Locator, Page } from "@playwright/test";
import { expect, test } from "./support/fixtures";
import { packetFor, storePacket, uniqueId, type IngestResult } from "./support/api";

/** The first page: every active thread with its next action, highest severity and flags in words. */

/** A thread's row on the board, found by the thread key it shows. */
function threadRow(page: Page, key: string): Locator {
  return page.getByRole("listitem").filter({ has: page.getByText(key, { exact: true }) });
}

/** The flags a row shows, as people read them: "Title: reason". */
function flagItems(row: Locator): Locator {
  return row.getByRole("list", { name: "Flags" }).getByRole("listitem");
}

const flagText = (title: string, result: IngestResult, code: string) =>
  `${title}: ${result.flags.find((flag) => flag.code === code)?.reason ?? `(no ${code} flag)`}`;

test("each thread shows its next action, its highest severity and its flags with their reasons", async ({ page, request, agentToken }) => {
  const dirtyKey = uniqueId("home-dirty");
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
  const unratedKey = uniqueId("home-unrated");
  const unrated = await storePacket(
    request,
    agentToken,
    packetFor(unratedKey, { open_risks: ["two imports still use the old path"], next_action: `fix the imports of ${unratedKey}` }),
  );
  const quietKey = uniqueId("home-quiet");
  await storePacket(request, agentToken, packetFor(quietKey, { open_risks: [], next_action: `open a pull request for ${quietKey}` }));

  await page.goto("/");
  await expect(page.getByRole("heading", { name: "Baton", level: 1 })).toBeVisible();

  const dirtyRow = threadRow(page, dirtyKey);
  await expect(dirtyRow).toHaveCount(1);
  await expect(dirtyRow.getByText(`review the prod plan of ${dirtyKey} with a human`, { exact: true })).toBeVisible();
  await expect(dirtyRow.getByText("critical", { exact: true })).toBeVisible();
  for (const lower of ["low", "medium", "no risks"]) await expect(dirtyRow.getByText(lower, { exact: true })).toHaveCount(0);
  await expect(flagItems(dirtyRow)).toHaveText([
    flagText("Dirty workbench", dirty, "dirty_state"),
    flagText("Open questions", dirty, "open_questions"),
  ]);
  await expect(flagItems(dirtyRow).first()).toContainText(
    "Clean-state check found 2 blocking problems: infra/prod/vpc.tf modified and not committed; plan.tfplan.tmp left behind.",
  );
  await expect(flagItems(dirtyRow).nth(1)).toContainText("1 question for a person, 1 blocking");

  const unratedRow = threadRow(page, unratedKey);
  await expect(unratedRow.getByText(`fix the imports of ${unratedKey}`, { exact: true })).toBeVisible();
  await expect(unratedRow.getByText("medium", { exact: true })).toBeVisible();
  await expect(flagItems(unratedRow)).toHaveText([flagText("Unknown severity", unrated, "unknown_severity")]);
  await expect(flagItems(unratedRow)).toContainText(["1 risk without a recognised severity (none given), shown as medium."]);

  const quietRow = threadRow(page, quietKey);
  await expect(quietRow.getByText(`open a pull request for ${quietKey}`, { exact: true })).toBeVisible();
  await expect(quietRow.getByText("no risks", { exact: true })).toBeVisible();
  await expect(quietRow.getByRole("list", { name: "Flags" })).toHaveCount(0);
});

test("a thread without a next action says so, with the flag's reason", async ({ page, request, agentToken }) => {
  const key = uniqueId("home-sentinel");
  const result = await storePacket(request, agentToken, {
    thread: key,
    summary: "task T-040: review=None, gate=None",
    changed_files: [],
    commands_run: [],
    failed_attempts: [],
    open_risks: [{ severity: "high", detail: "nobody knows what comes next" }],
    next_action: "no next_action recorded; needs human",
    verdict_pointer: { verdict: "outputs/verification/T-040.json" },
  });
  await page.goto("/");
  const row = threadRow(page, key);
  await expect(row.getByText("No next action recorded", { exact: true })).toBeVisible();
  await expect(row.getByText("high", { exact: true })).toBeVisible();
  await expect(flagItems(row)).toHaveText([flagText("No next action", result, "missing_next_action")]);
  await expect(flagItems(row)).toContainText(['next_action is the generator\'s placeholder "needs human"']);
});

test("only the active version of a thread is shown, and archived threads are not", async ({ page, request, agentToken }) => {
  const key = uniqueId("home-versions");
  await storePacket(request, agentToken, packetFor(key, { next_action: `old step of ${key}`, created_at: new Date(Date.now() - 60_000).toISOString() }));
  await storePacket(request, agentToken, packetFor(key, { next_action: `new step of ${key}`, created_at: new Date().toISOString() }));
  const archivedKey = uniqueId("home-archived");
  await storePacket(request, agentToken, packetFor(archivedKey, { status: "archived", next_action: `nothing left for ${archivedKey}` }));

  await page.goto("/");
  const row = threadRow(page, key);
  await expect(row).toHaveCount(1);
  await expect(row.getByText(`new step of ${key}`, { exact: true })).toBeVisible();
  await expect(page.getByText(`old step of ${key}`)).toHaveCount(0);
  await expect(page.getByText(archivedKey)).toHaveCount(0);
  await expect(page.getByText(`nothing left for ${archivedKey}`)).toHaveCount(0);
});
