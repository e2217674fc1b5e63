import { cp, mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import type { APIRequestContext, Locator, Page } from "@playwright/test";
import { expect, test } from "./support/fixtures";
import { EXAMPLES_DIR, FORMATS_DIR } from "./support/paths";
import { bearer, findThread, packetFor, storePacket, uniqueId, type ThreadDetailDto } from "./support/api";
import { card, cardsIn } from "./support/board";

/**
 * The thread page (`/threads/<encodeURIComponent(key)>`): the active packet in
 * sections, verdict reports read from the workspace root, the version history
 * with a diff, live refresh, downloads and odd keys.
 */

const INGEST_TIMEOUT_MS = 10_000;
const threadUrl = (key: string) => `/threads/${encodeURIComponent(key)}`;
const section = (page: Page, name: string | RegExp) => page.getByRole("region", { name });

/** Writes `packet` where the workbench generator does, below the watched folder; waits until it is ingested. */
async function writeWatched(
  request: APIRequestContext,
  token: string,
  watchDir: string,
  workspace: string,
  packet: Record<string, unknown>,
): Promise<ThreadDetailDto> {
  const folder = path.join(watchDir, workspace, "outputs", "handoff", uniqueId("sess"));
  await mkdir(folder, { recursive: true });
  await writeFile(path.join(folder, "handoff.json"), JSON.stringify(packet, null, 2));
  const key = packet.thread as string;
  await expect
    .poll(async () => (await findThread(request, token, key))?.active_packet.next_action ?? null, { timeout: INGEST_TIMEOUT_MS })
    .toBe(packet.next_action);
  return (await findThread(request, token, key))!;
}

/** The list items under a "Title:" line of the Differences region. */
function diffItems(region: Locator, title: string): Locator {
  return region.getByText(`${title}:`, { exact: true }).locator("xpath=..").getByRole("listitem");
}

/** A "Title: none" line of the Differences region. */
async function expectDiffNone(region: Locator, title: string): Promise<void> {
  await expect(region.getByText(`${title}:`, { exact: true }).locator("xpath=..")).toHaveText(`${title}: none`);
}

test("the version history compares previous to active by default, and any two versions on request", async ({ page, request, agentToken }) => {
  const key = uniqueId("diff");
  const v1 = await storePacket(
    request,
    agentToken,
    packetFor(key, {
      created_at: new Date(Date.now() - 120_000).toISOString(),
      changed_files: ["src/kept.ts", "src/dropped.ts"],
      open_risks: [
        { severity: "low", detail: "the cache key ignores the locale" },
        { severity: "medium", detail: "the retry loop has no jitter" },
        { severity: "high", detail: "refunds may be sent twice" },
      ],
      next_action: "write the failing refund test",
    }),
  );
  const v2 = await storePacket(
    request,
    agentToken,
    packetFor(key, {
      created_at: new Date(Date.now() - 60_000).toISOString(),
      changed_files: ["src/kept.ts", "src/added.ts"],
      open_risks: [
        { severity: "low", detail: "the cache key ignores the locale" },
        { severity: "critical", detail: "refunds may be sent twice" },
        { severity: "medium", detail: "the webhook secret is logged" },
      ],
      next_action: "make the refund test pass",
    }),
  );
  expect(v2.active).toBe(true);

  await page.goto(threadUrl(key));
  const versions = section(page, "Versions (2)").getByRole("list").first().getByRole("listitem");
  await expect(versions).toHaveCount(2);
  await expect(versions.first()).toContainText("make the refund test pass");
  await expect(versions.first()).toContainText("active");
  await expect(versions.nth(1)).toContainText("write the failing refund test");
  await expect(versions.nth(1)).not.toContainText("active");
  const from = page.getByRole("combobox", { name: /^From/ });
  const to = page.getByRole("combobox", { name: /^To/ });
  await expect(from).toHaveValue(v1.packet_id);
  await expect(to).toHaveValue(v2.packet_id);

  const diff = page.getByRole("region", { name: "Differences" });
  await expect(diff.getByText("Next action:", { exact: true }).locator("xpath=..")).toHaveText(
    "Next action: write the failing refund test → make the refund test pass",
  );
  await expect(diff.getByRole("deletion")).toHaveText("write the failing refund test");
  await expect(diff.getByRole("insertion")).toHaveText("make the refund test pass");
  await expect(diffItems(diff, "Risks added")).toHaveText(["medium: the webhook secret is logged"]);
  await expect(diffItems(diff, "Risks removed")).toHaveText(["medium: the retry loop has no jitter"]);
  await expect(diffItems(diff, "Severity changed")).toHaveText(["refunds may be sent twice: high → critical"]);
  await expect(diffItems(diff, "Files added")).toHaveText(["src/added.ts"]);
  await expect(diffItems(diff, "Files no longer changed")).toHaveText(["src/dropped.ts"]);

  // The other way round, through the form (a plain GET).
  await from.selectOption(v2.packet_id);
  await to.selectOption(v1.packet_id);
  await page.getByRole("button", { name: "Compare" }).click();
  await expect(page).toHaveURL(new RegExp(`\\?from=${v2.packet_id}&to=${v1.packet_id}$`));
  await expect(page.getByRole("combobox", { name: /^From/ })).toHaveValue(v2.packet_id);
  await expect(page.getByRole("combobox", { name: /^To/ })).toHaveValue(v1.packet_id);
  await expect(diff.getByRole("deletion")).toHaveText("make the refund test pass");
  await expect(diff.getByRole("insertion")).toHaveText("write the failing refund test");
  await expect(diffItems(diff, "Risks added")).toHaveText(["medium: the retry loop has no jitter"]);
  await expect(diffItems(diff, "Risks removed")).toHaveText(["medium: the webhook secret is logged"]);
  await expect(diffItems(diff, "Severity changed")).toHaveText(["refunds may be sent twice: critical → high"]);
  await expect(diffItems(diff, "Files added")).toHaveText(["src/dropped.ts"]);
  await expect(diffItems(diff, "Files no longer changed")).toHaveText(["src/added.ts"]);

  // A version against itself: nothing changed.
  await page.getByRole("combobox", { name: /^To/ }).selectOption(v2.packet_id);
  await page.getByRole("button", { name: "Compare" }).click();
  await expect(page).toHaveURL(new RegExp(`\\?from=${v2.packet_id}&to=${v2.packet_id}$`));
  await expect(diff.getByText("Next action:", { exact: true }).locator("xpath=..")).toHaveText("Next action: unchanged");
  for (const title of ["Risks added", "Risks removed", "Severity changed", "Files added", "Files no longer changed"]) {
    await expectDiffNone(diff, title);
  }
});

test("the verification and review reports of testing/fixtures/examples/workspace are rendered, and the card says verdict: fail", async ({
  page,
  request,
  agentToken,
  watchDir,
}) => {
  const workspace = uniqueId("ws-t014");
  await cp(path.join(EXAMPLES_DIR, "workspace", "outputs"), path.join(watchDir, workspace, "outputs"), {
    recursive: true,
    filter: (source) => !source.includes(`${path.sep}handoff`),
  });
  const lesson = JSON.parse(await readFile(path.join(EXAMPLES_DIR, "packets", "lesson-shape.json"), "utf8")) as Record<string, unknown>;
  const key = uniqueId("t014");
  // Without the example's "block" risk: the failed reports alone must put the card in front of a person.
  const packet: Record<string, unknown> = {
    ...lesson,
    thread: key,
    agent: `${key}-agent`,
    open_risks: [{ severity: "warn", detail: "off-scope: docs/billing.md" }],
  };
  expect(packet.verdict_pointer).toEqual({ verdict: "outputs/verification/T-014.json", review: "outputs/review/T-014.json" });
  await writeWatched(request, agentToken, watchDir, workspace, packet);

  await page.goto(threadUrl(key));
  const verdict = section(page, "Verdict");
  await expect(verdict.getByTestId("verdict-pointer")).toHaveCount(2);
  for (const pointer of await verdict.getByTestId("verdict-pointer").all()) await expect(pointer).toHaveAttribute("data-status", "ok");
  await expect(verdict.getByText("fail", { exact: true })).toBeVisible();

  const verification = verdict.getByLabel("Verification report");
  await expect(verification.getByText(/^Verification did not pass/)).toHaveText("Verification did not pass · coverage 71% (was 74%) · at 9b2e7d1");
  await expect(verification.getByRole("listitem")).toHaveText([
    /^critical\s*acceptance\.failed test_invoice_rounding_half_even still red$/,
    /^medium\s*scope\.off_scope off-scope: docs\/billing\.md$/,
    /^info\s*coverage\.minor_regression coverage 0\.74 -> 0\.71$/,
  ]);

  const review = verdict.getByLabel("Review report");
  await expect(review.getByText(/^Review /)).toHaveText("Review 6/10 · soft fail");
  const dimensions: [string, string, string][] = [
    ["problem_fit", "2/2", "touches the invoice totals the task names"],
    ["scope_discipline", "1/2", "edited docs outside scope"],
    ["assumptions", "1/2", "assumes all currencies use 2 decimals"],
    ["verification_quality", "0/2", "the acceptance test is still failing"],
    ["handoff_readiness", "2/2", "next action is concrete"],
  ];
  const rows = review.getByRole("row").filter({ has: page.getByRole("cell") });
  await expect(rows).toHaveCount(5);
  for (const [index, cells] of dimensions.entries()) await expect(rows.nth(index).getByRole("cell")).toHaveText(cells);

  // The board reads the same reports: fail, in Needs you, with the reason in words.
  await page.goto(`/?q=${encodeURIComponent(key)}`);
  const found = card(page, key);
  await expect(cardsIn(page, "Needs you").and(found)).toHaveCount(1);
  const failed = found.getByRole("list", { name: "Needs you because" }).getByText("Verdict failed", { exact: true });
  await expect(failed).toBeVisible();
  await expect(failed).toHaveAttribute("title", /^verification outputs\/verification\/T-014\.json did not pass \(findings: 1 critical, 1 medium, 1 info\)/);
});

test("the board's flag filter finds the verdict flags the cards show (Verdict failed from reports, No verdict)", async ({
  page,
  request,
  agentToken,
  watchDir,
}) => {
  const workspace = uniqueId("ws-t014-filter");
  await cp(path.join(EXAMPLES_DIR, "workspace", "outputs", "verification"), path.join(watchDir, workspace, "outputs", "verification"), {
    recursive: true,
  });
  const failedKey = uniqueId("t014-filter");
  await writeWatched(
    request,
    agentToken,
    watchDir,
    workspace,
    packetFor(failedKey, { open_risks: [], verdict_pointer: { verdict: "outputs/verification/T-014.json" }, next_action: `fix ${failedKey}` }),
  );
  // Over HTTP without its report there is no verdict to read: the card says "verdict: missing",
  // and its flag says the verdict was not sent (decision 051), not a setup problem.
  const unreadKey = uniqueId("no-verdict-filter");
  await storePacket(request, agentToken, packetFor(unreadKey));

  await page.goto(`/?q=${encodeURIComponent(failedKey)}`);
  await expect(card(page, failedKey).getByRole("list", { name: "Needs you because" })).toContainText("Verdict failed");
  await page.goto(`/?q=${encodeURIComponent(unreadKey)}`);
  await expect(card(page, unreadKey)).toContainText("verdict: missing");
  await expect(card(page, unreadKey).locator('[data-flag="verdict_missing"]')).toHaveAttribute("title", /verdict not sent/);

  // A card that shows a flag must be found by the filter for that flag.
  await page.goto(`/?flag=verdict_failed&q=${encodeURIComponent(failedKey)}`);
  await expect.soft(card(page, failedKey), "?flag=verdict_failed").toBeVisible();
  await page.goto(`/?flag=verdict_missing&q=${encodeURIComponent(unreadKey)}`);
  await expect.soft(card(page, unreadKey), "?flag=verdict_missing").toBeVisible();
});

test("verdict pointers that leave the workspace root are refused, and nothing outside it reaches the page", async ({
  page,
  request,
  agentToken,
  watchDir,
}) => {
  const outer = uniqueId("ws-outer");
  const workspace = path.join(outer, "inner");
  const marker = uniqueId("TOP-SECRET");
  // A readable report just outside the workspace root, where "outputs/../../secret.json" points.
  await mkdir(path.join(watchDir, workspace, "outputs", "verification"), { recursive: true });
  await writeFile(path.join(watchDir, outer, "secret.json"), JSON.stringify({ passed: true, findings: [marker] }));
  await symlink("/etc/passwd", path.join(watchDir, workspace, "outputs", "verification", "linked.json"));

  const cases = [
    { pointer: "../../../../etc/passwd", reason: "leaves the workspace root (..)" },
    { pointer: { verdict: "outputs/../../secret.json" }, reason: "leaves the workspace root (..)" },
    { pointer: "/etc/passwd", reason: "absolute path" },
    { pointer: { verdict: "outputs/verification/linked.json" }, reason: "symlink points outside the workspace root" },
  ];
  for (const { pointer, reason } of cases) {
    const key = uniqueId("refused");
    await writeWatched(request, agentToken, watchDir, workspace, packetFor(key, { verdict_pointer: pointer, next_action: `check ${key}` }));
    const response = await page.goto(threadUrl(key));
    expect(response?.status()).toBe(200);
    const item = section(page, "Verdict").getByTestId("verdict-pointer");
    await expect(item, JSON.stringify(pointer)).toHaveAttribute("data-status", "refused");
    await expect(item).toContainText(`refused: ${reason}`);
    const html = await page.content();
    expect(html).not.toContain("root:x:0");
    expect(html).not.toContain(marker);
    const served = await response!.text();
    expect(served).not.toContain("root:x:0");
    expect(served).not.toContain(marker);
  }
});

test("a report that does not exist is missing; a packet posted over HTTP has no root to read from", async ({
  page,
  request,
  agentToken,
  watchDir,
}) => {
  const key = uniqueId("missing");
  await writeWatched(
    request,
    agentToken,
    watchDir,
    uniqueId("ws-missing"),
    packetFor(key, { verdict_pointer: { verdict: "outputs/verification/T-404.json" }, next_action: `find ${key}` }),
  );
  await page.goto(threadUrl(key));
  const item = section(page, "Verdict").getByTestId("verdict-pointer");
  await expect(item).toHaveAttribute("data-status", "missing");
  await expect(item).toContainText("outputs/verification/T-404.json");
  await expect(item).toContainText("missing: no such file in the workspace root");

  const httpKey = uniqueId("no-root");
  await storePacket(request, agentToken, packetFor(httpKey));
  await page.goto(threadUrl(httpKey));
  await expect(section(page, "Verdict").getByTestId("verdict-pointer")).toHaveAttribute("data-status", "no_root");
  await expect(section(page, "Verdict").getByText("missing", { exact: true })).toBeVisible();
});

test("the page shows the packet's sections, and the downloads are the merged handoff.json and a handoff.md", async ({
  page,
  request,
  agentToken,
}) => {
  const key = uniqueId("downloads");
  const packet = packetFor(key, {
    agent: { name: `${key}-agent`, kind: "claude-code", model: "opus" },
    project: "acme/downloads",
    branch: "feat/downloads",
    summary: `summary of ${key}`,
    changed_files: ["src/a.ts", "src/b.ts"],
    commands_run: [{ command: "npm test", exit_code: 1 }],
    failed_attempts: [{ attempt: "npm test", reason: "one assertion still fails" }],
    open_risks: [{ severity: "high", detail: "the migration is not reversible" }],
    questions_for_human: [{ id: "q1", question: "May I drop the old column?", blocking: true }],
    next_action: "deploy the billing fix to staging",
    x_extra: { kept: true },
  });
  await storePacket(request, agentToken, packet);
  await page.goto(threadUrl(key));

  await expect(section(page, "Next action")).toContainText("deploy the billing fix to staging");
  await expect(section(page, "Flags")).toContainText("Open questions open_questions: 1 question for a person, 1 blocking.");
  await expect(section(page, "Summary")).toContainText(`summary of ${key}`);
  await expect(section(page, "Open risks (1)")).toContainText("the migration is not reversible");
  await expect(section(page, "Questions for a person")).toContainText("blockingMay I drop the old column?");
  await expect(section(page, "Changed files (2)").getByRole("listitem")).toHaveText(["src/a.ts", "src/b.ts"]);
  await expect(section(page, "Commands run")).toContainText("npm test → exit 1");
  await expect(section(page, "Failed attempts")).toContainText("one assertion still fails");
  await expect(section(page, "Ledger")).toContainText("packet received from http");
  await expect(section(page, "Raw JSON (as received)")).toContainText('"x_extra"');

  const jsonLink = page.getByRole("link", { name: "Download handoff.json" });
  await expect(jsonLink).toHaveAttribute("href", `${threadUrl(key)}/handoff.json`);
  const [jsonDownload] = await Promise.all([page.waitForEvent("download"), jsonLink.click()]);
  expect(jsonDownload.suggestedFilename()).toBe("handoff.json");
  const merged = JSON.parse(await readFile((await jsonDownload.path())!, "utf8"));
  expect(merged).toEqual({ ...packet, human: { revision: 0, updated_at: null, decision: null, answers: [], questions: [] } });

  const mdLink = page.getByRole("link", { name: "Download handoff.md" });
  await expect(mdLink).toHaveAttribute("href", `${threadUrl(key)}/handoff.md`);
  const [mdDownload] = await Promise.all([page.waitForEvent("download"), mdLink.click()]);
  expect(mdDownload.suggestedFilename()).toBe("handoff.md");
  const markdown = await readFile((await mdDownload.path())!, "utf8");
  expect(markdown).toMatch(/^# Handoff: /);
  expect(markdown).toContain("deploy the billing fix to staging");
  expect(markdown).toContain("the migration is not reversible");

  // Outside a browser page, the downloads want a token like the rest of the API.
  expect((await request.get(`${threadUrl(key)}/handoff.json`)).status()).toBe(401);
  expect((await request.get(`${threadUrl(key)}/handoff.json`, { headers: bearer(agentToken) })).status()).toBe(200);
});

test("a Markdown handoff posted as it is shows its next action, questions and risks, flagged mapped_from", async ({ page, request, agentToken }) => {
  const key = uniqueId("markdown-handoff");
  const fixture = await readFile(path.join(FORMATS_DIR, "HANDOFF.md"), "utf8");
  const response = await request.post("/api/v1/packets", {
    headers: { ...bearer(agentToken), "content-type": "text/markdown" },
    data: Buffer.from(`---\nthread: ${key}\n---\n${fixture}`, "utf8"),
  });
  expect(response.status(), await response.text()).toBe(201);
  await page.goto(threadUrl(key));
  await expect(section(page, "Next action")).toContainText("Propagate deletes");
  await expect(section(page, "Flags")).toContainText("Mapped from another format");
  // The front matter that gives the thread its key makes it the front-matter format.
  await expect(section(page, "Flags")).toContainText("Mapped from Markdown with YAML front matter");
  await expect(section(page, "Questions for a person")).toContainText("Who owns the ops repository change?");
  await expect(section(page, "Open risks (1)")).toContainText("The staging search cluster rejects our service account");
  await expect(section(page, "Raw JSON (as received)")).toContainText('"received_markdown"');
});

test("the page refreshes itself when a newer version of its thread arrives", async ({ page, request, agentToken }) => {
  const key = uniqueId("thread-live");
  await storePacket(request, agentToken, packetFor(key, { next_action: "first step", created_at: new Date(Date.now() - 60_000).toISOString() }));
  const stream = page.waitForResponse((response) => response.url().includes("/api/v1/stream"));
  await page.goto(threadUrl(key));
  await expect(section(page, "Next action")).toContainText("first step");
  expect((await stream).status()).toBe(200);
  // An unrelated thread's packet changes nothing here.
  await storePacket(request, agentToken, packetFor(uniqueId("elsewhere")));

  await storePacket(request, agentToken, packetFor(key, { next_action: "second step", created_at: new Date().toISOString() }));
  await expect(section(page, "Next action")).toContainText("second step", { timeout: 5_000 });
  await expect(page.getByRole("region", { name: "Versions (2)" })).toBeVisible();
  expect(await page.evaluate(() => performance.getEntriesByType("navigation").length)).toBe(1);
});

test("an unknown thread is a 404 page", async ({ page }) => {
  const response = await page.goto(threadUrl(uniqueId("no such thread")));
  expect(response?.status()).toBe(404);
  await expect(page.getByText("This page could not be found.")).toBeVisible();
});

test("a key with /, #, @, % and spaces round-trips through the URL", async ({ page, request, agentToken }) => {
  const run = uniqueId("odd");
  const key = `team/${run}@feat/x#topic 100% done %41 ok`;
  await storePacket(request, agentToken, packetFor(key, { next_action: `handle the odd key ${run}` }));

  await page.goto(`/?q=${encodeURIComponent(run)}`);
  const found = card(page, key).getByRole("link");
  await expect(found).toHaveAttribute("href", threadUrl(key));
  await found.click();
  await expect(page).toHaveURL(threadUrl(key));
  await expect(page.getByRole("navigation", { name: "Breadcrumb" })).toContainText(key);
  await expect(section(page, "Next action")).toContainText(`handle the odd key ${run}`);

  const response = await page.goto(threadUrl(key));
  expect(response?.status()).toBe(200);
  const download = await request.get(`${threadUrl(key)}/handoff.json`, { headers: bearer(agentToken) });
  expect(download.status(), await download.text()).toBe(200);
  expect((await download.json()).thread).toBe(key);
  const markdown = await request.get(`${threadUrl(key)}/handoff.md`, { headers: bearer(agentToken) });
  expect(markdown.status(), await markdown.text()).toBe(200);
  expect(await markdown.text()).toContain(`handle the odd key ${run}`);
  // "%41" stays "%41": the key is decoded once, not twice.
  expect((await page.goto(threadUrl(key.replace("%41", "A"))))?.status()).toBe(404);
});
