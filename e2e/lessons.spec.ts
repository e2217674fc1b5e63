import { expect, test } from "./support/fixtures";
import { bearer, packetFor, storePacket, uniqueId } from "./support/api";

/** Recurring failures (/lessons): the same failed attempt in two threads is one entry, with both threads. */

test("the same failed attempt in two threads is one lesson with a count of 2 and both threads", async ({ page, request, agentToken }) => {
  const run = uniqueId("lesson");
  const threads = [uniqueId("lesson-a"), uniqueId("lesson-b")];
  // Worded a little differently each time: case, spacing, the temp folder and the minutes differ.
  await storePacket(
    request,
    agentToken,
    packetFor(threads[0]!, { failed_attempts: [{ attempt: `npm   run ${run}`, reason: "timed out after 10 minutes in /tmp/run-a1" }] }),
  );
  await storePacket(
    request,
    agentToken,
    packetFor(threads[1]!, { failed_attempts: [{ attempt: `NPM run ${run}`, reason: "Timed out after 12 minutes in /tmp/run-b7" }] }),
  );

  // The API says the same as the page.
  const response = await request.get(`/api/v1/lessons?q=${encodeURIComponent(run)}`, { headers: bearer(agentToken) });
  expect(response.status(), await response.text()).toBe(200);
  const { lessons } = (await response.json()) as { lessons: { occurrences: number; threads: { key: string }[] }[] };
  expect(lessons).toHaveLength(1);
  expect(lessons[0]!.occurrences).toBe(2);
  expect(lessons[0]!.threads.map((thread) => thread.key).sort()).toEqual([...threads].sort());

  await page.goto("/lessons");
  await expect(page.getByRole("heading", { name: "Recurring failures" })).toBeVisible();
  await expect(page.getByText("turn these into a rule for the agents")).toBeVisible();
  await page.getByRole("searchbox", { name: "Search" }).fill(run);
  await page.getByRole("button", { name: "Filter" }).click();
  await expect(page).toHaveURL(new RegExp(`[?&]q=${run}`));

  const rows = page.getByRole("table").getByRole("row").filter({ has: page.getByRole("cell") });
  await expect(rows).toHaveCount(1);
  const [attempt, reason, occurrences, threadCell] = await rows.first().getByRole("cell").all();
  // One wording represents the group (the latest: lib/views/lessons/queries.test.ts pins which).
  await expect(attempt!).toHaveText(new RegExp(`^(npm\\s+run|NPM run) ${run}$`));
  await expect(reason!).toHaveText(/^timed out after 1[02] minutes in \/tmp\/run-(a1|b7)$/i);
  await expect(occurrences!).toHaveText("2");
  const links = threadCell!.getByRole("link");
  await expect(links).toHaveCount(2);
  await expect(threadCell!.getByRole("list", { name: "2 threads" })).toBeVisible();
  for (const key of threads) await expect(threadCell!.getByRole("link", { name: key })).toHaveAttribute("href", `/threads/${encodeURIComponent(key)}`);

  await threadCell!.getByRole("link", { name: threads[0]! }).click();
  await expect(page).toHaveURL(new RegExp(`/threads/${encodeURIComponent(threads[0]!)}$`));
});
