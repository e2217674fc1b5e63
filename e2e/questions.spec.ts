import { expect, test } from "./support/fixtures";
import { findThread, packetFor, storePacket, uniqueId } from "./support/api";

/** The questions inbox: every unanswered agent question, answered with the keyboard alone. */

test("three questions answered in the inbox with the keyboard alone; an identical question from two threads answered once", async ({ page, request, agentToken }) => {
  const run = uniqueId("inbox");
  const questions = [`${run}: which region first?`, `${run}: may I drop the legacy table?`, `${run}: keep the feature flag?`];
  const threads = [uniqueId("inbox-a"), uniqueId("inbox-b"), uniqueId("inbox-c"), uniqueId("inbox-d")];
  // Blocking and older than anything else the suite sends: these come first in the inbox.
  const ask = (thread: string, question: string, second: number) =>
    storePacket(request, agentToken, packetFor(thread, { created_at: `2001-01-01T00:00:0${second}Z`, questions_for_human: [{ id: "q-x", question, blocking: true }] }));
  await ask(threads[0]!, questions[0]!, 1);
  await ask(threads[1]!, questions[1]!, 2);
  await ask(threads[2]!, questions[2]!, 3);
  await ask(threads[3]!, questions[2]!.toUpperCase(), 4);

  await page.goto("/questions");
  // The keys work once the page is live (hydrated, stream open).
  await expect(page.getByText("live", { exact: true })).toBeVisible();
  // Groups, not the thread entries listed inside each.
  const groups = page.getByRole("list", { name: "Unanswered questions" }).getByTestId("question-group");
  await expect(groups.first()).toContainText(questions[0]!);
  await expect(groups.nth(2)).toContainText("asked by 2 threads");

  const answers = ["eu-west first", "No, keep it until March", "Yes, for one more release"];
  for (const [index, answer] of answers.entries()) {
    if (index === 0) await page.keyboard.press("j");
    const current = page.locator('[data-testid="question-group"][aria-current="true"]');
    await expect(current).toBeFocused();
    await expect(current).toContainText(questions[index]!);
    await page.keyboard.press("Enter");
    await expect(current.getByRole("textbox", { name: /^Answer: / })).toBeFocused();
    await page.keyboard.type(answer);
    await page.keyboard.press("Control+Enter");
    if (index === 2) {
      // One answer for two threads asks once, naming how many; Enter confirms.
      const confirm = current.getByRole("group", { name: "Confirm the answer" });
      await expect(confirm).toContainText(`Send “${answer}” to all 2 threads?`);
      await expect(confirm.getByRole("button", { name: "Yes, send to 2 threads" })).toBeFocused();
      await page.keyboard.press("Enter");
    }
    await expect(page.getByText(questions[index]!, { exact: true })).toHaveCount(0);
  }

  const answered = async (thread: string) => (await findThread(request, agentToken, thread))!.human.answers.map((entry) => entry.answer);
  expect(await answered(threads[0]!)).toEqual([answers[0]]);
  expect(await answered(threads[1]!)).toEqual([answers[1]]);
  expect(await answered(threads[2]!)).toEqual([answers[2]]);
  expect(await answered(threads[3]!)).toEqual([answers[2]]);
  // Answered questions no longer hold the card in Needs you for them.
  const card = (await findThread(request, agentToken, threads[3]!))!;
  expect(card.active_packet.flags.map((flag) => flag.code)).not.toContain("open_questions");
  expect(card.active_packet.human.unanswered_questions).toBe(0);
});

test("offered options are buttons that answer at once", async ({ page, request, agentToken }) => {
  const thread = uniqueId("inbox-options");
  const question = `${thread}: which queue?`;
  await storePacket(request, agentToken, packetFor(thread, { created_at: "2001-01-01T00:00:09Z", questions_for_human: [{ question, options: ["sqs", "kafka"] }] }));
  await page.goto("/questions");
  const group = page.getByTestId("question-group").filter({ hasText: question });
  await group.getByRole("group", { name: "Offered answers" }).getByRole("button", { name: "kafka" }).click();
  await expect(page.getByText(question, { exact: true })).toHaveCount(0);
  expect((await findThread(request, agentToken, thread))!.human.answers).toEqual([
    expect.objectContaining({ question_id: "q0", question, answer: "kafka", by: "admin" }),
  ]);
});

test("an answer to a group is confirmed once and can be undone; each thread tells when it asked and when it arrived", async ({ page, request, agentToken }) => {
  const run = uniqueId("inbox-undo");
  const question = `${run}: may I rotate the key?`;
  const threads = [`${run}-a`, `${run}-b`];
  for (const thread of threads) {
    await storePacket(request, agentToken, packetFor(thread, { created_at: "2001-01-01T00:00:08Z", questions_for_human: [{ question, options: ["yes", "no"] }] }));
  }
  await page.goto("/questions");
  await expect(page.getByText("live", { exact: true })).toBeVisible();
  const group = page.getByTestId("question-group").filter({ hasText: question });
  // Written long ago, received now: both told; the exact times are the description, shown on focus.
  const asked = group.getByRole("listitem").first().locator("time");
  await expect(asked).toHaveText(/^written \d+ d ago · received just now$/);
  await asked.focus();
  await expect(page.getByRole("tooltip")).toHaveText(/^written Jan 1 00:00 UTC, received \w{3} \d+ \d\d:\d\d UTC$/);
  await expect(asked).toHaveAccessibleDescription(/^written Jan 1 00:00 UTC, received /);

  await group.getByRole("group", { name: "Offered answers" }).getByRole("button", { name: "yes" }).click();
  await group.getByRole("button", { name: "Yes, send to 2 threads" }).click();
  await expect(page.getByText(question, { exact: true })).toHaveCount(0);
  const notice = page.getByTestId("undo-notice");
  await expect(notice).toContainText("Answered 2 threads");
  await notice.getByRole("button", { name: "Undo" }).click();
  await expect(notice).toContainText("Answer taken back from 2 threads.");
  await expect(page.getByText(question, { exact: true })).toHaveCount(1);
  for (const thread of threads) {
    const human = (await findThread(request, agentToken, thread))!.human;
    expect([human.answers, human.revision]).toEqual([[], 2]);
  }
});
