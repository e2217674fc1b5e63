import { request as playwrightRequest } from "@playwright/test";
import { expect, test } from "./support/fixtures";
import { bearer, findThread, packetFor, storePacket, threadPath, uniqueId } from "./support/api";
import { card, column, waitForLive } from "./support/board";
import { contextAs, createPerson, fromPage } from "./support/people";

/** People in the loop: approve and intervene, conflicts between two people, and who may act at all. */

const approveButton = (key: string) => new RegExp(`^Approve .*${escape(key)}`);
const interveneButton = (key: string) => new RegExp(`^Intervene on .*${escape(key)}`);
function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

test("approve is one click on a card: the card moves to Approved and the packet carries the decision", async ({ page, request, agentToken }) => {
  const key = uniqueId("approve");
  await storePacket(request, agentToken, packetFor(key, { agent: "approver-agent" }));
  await page.goto(`/?q=${key}`);
  await waitForLive(page);
  await expect(column(page, "Ready").getByTestId("board-card")).toHaveCount(1);
  await page.getByRole("button", { name: approveButton(key) }).click();
  await expect(column(page, "Approved").locator(`[data-thread-key="${key}"]`)).toBeVisible();
  await expect(column(page, "Ready").getByTestId("board-card")).toHaveCount(0);

  const detail = (await findThread(request, agentToken, key))!;
  expect(detail.human).toMatchObject({ revision: 1, decision: { kind: "approved", by: "admin" }, questions: [] });
  const handoff = (await (await request.get(threadPath(key, "/handoff"), { headers: bearer(agentToken) })).json()) as { human: unknown };
  expect(handoff.human).toEqual(detail.human);
});

test("intervene opens a text field in place; Enter sends; the card moves to Intervened for everyone watching", async ({ page, browser, baseURL, request, agentToken }) => {
  const key = uniqueId("intervene");
  await storePacket(request, agentToken, packetFor(key, { agent: "intervened-agent" }));
  // A second person watches the same board.
  const watcher = await contextAs(browser, baseURL!, await createPerson(baseURL!, "viewer"));
  const watching = await watcher.newPage();
  await watching.goto(`/?q=${key}`);
  await waitForLive(watching);

  await page.goto(`/?q=${key}`);
  await page.getByRole("button", { name: interveneButton(key) }).click();
  const field = page.getByRole("textbox", { name: /^Instructions for the next session of/ });
  await expect(field).toBeFocused();
  await field.fill("Explain why the migration was reverted before retrying.");
  await field.press("Enter");
  await expect(column(page, "Intervened").locator(`[data-thread-key="${key}"]`)).toBeVisible();
  await expect(column(watching, "Intervened").locator(`[data-thread-key="${key}"]`)).toBeVisible();
  await watcher.close();

  const detail = (await findThread(request, agentToken, key))!;
  expect(detail.human.decision).toMatchObject({ kind: "intervened", by: "admin" });
  expect(detail.human.questions).toEqual([
    expect.objectContaining({ id: "h1", text: "Explain why the migration was reverted before retrying.", by: "admin", blocking: true }),
  ]);
  // The audit trail on the thread page: who, when, what.
  await page.goto(`/threads/${encodeURIComponent(key)}`);
  await expect(page.getByRole("region", { name: "Ledger" })).toContainText('intervened: "Explain why the migration was reverted before retrying." (revision 1)');
  await expect(page.getByRole("region", { name: "Ledger" })).toContainText("by admin");
});

test("a second browser acting on a stale revision sees the conflict, what changed, and recovers", async ({ page, browser, baseURL, request, agentToken }) => {
  const key = uniqueId("conflict");
  await storePacket(request, agentToken, packetFor(key, { agent: "contested-agent" }));
  const operator = await createPerson(baseURL!, "operator");
  const other = await contextAs(browser, baseURL!, operator);
  const stale = await other.newPage();
  // This browser hears nothing live (a slow link): its page keeps showing revision 0.
  await stale.route("**/api/v1/stream**", (route) => route.abort());
  await stale.goto(`/threads/${encodeURIComponent(key)}`);
  await expect(stale.getByRole("button", { name: approveButton(key) })).toBeEnabled();

  await page.goto(`/threads/${encodeURIComponent(key)}`);
  await page.getByRole("button", { name: approveButton(key) }).click();
  await expect(page.getByRole("region", { name: "People" })).toContainText("Approved by admin");

  await stale.getByRole("button", { name: interveneButton(key) }).click();
  await stale.getByRole("textbox", { name: /^Instructions for the next session of/ }).fill("Stop: check the staging data first.");
  await stale.getByRole("textbox", { name: /^Instructions for the next session of/ }).press("Enter");
  const alert = stale.getByRole("alert").filter({ hasText: "nothing was written" });
  await expect(alert).toBeVisible();
  await expect(alert).toContainText("approved by admin");
  await expect(alert).toContainText("revision 1");
  expect((await findThread(request, agentToken, key))!.human.revision).toBe(1);

  await alert.getByRole("button", { name: "Act on the current state" }).click();
  const field = stale.getByRole("textbox", { name: /^Instructions for the next session of/ });
  await expect(field).toHaveValue("Stop: check the staging data first.");
  await field.press("Enter");
  await expect.poll(async () => (await findThread(request, agentToken, key))!.human).toMatchObject({
    revision: 2,
    decision: { kind: "intervened", by: operator.username },
  });
  await other.close();
});

test("a viewer sees no action buttons, and a direct request as viewer is refused", async ({ browser, baseURL, request, agentToken }) => {
  const key = uniqueId("viewer");
  const stored = await storePacket(request, agentToken, packetFor(key, { questions_for_human: ["Ship it?"] }));
  const viewer = await contextAs(browser, baseURL!, await createPerson(baseURL!, "viewer"));
  const page = await viewer.newPage();
  await page.goto(`/?q=${key}`);
  await expect(card(page, key)).toBeVisible();
  await expect(page.getByRole("button", { name: /^(Approve|Intervene)/ })).toHaveCount(0);
  await page.goto(`/threads/${encodeURIComponent(key)}`);
  await expect(page.getByRole("heading", { name: "People" })).toBeVisible();
  await expect(page.getByRole("button", { name: /^(Approve|Intervene|Send)/ })).toHaveCount(0);
  await expect(page.getByRole("textbox", { name: /^Answer/ })).toHaveCount(0);

  const decision = { kind: "approved", packet_id: stored.packet_id, base_revision: 0 };
  const asViewer = await viewer.request.post(threadPath(key, "/decision"), { headers: fromPage(baseURL!), data: decision });
  expect(asViewer.status()).toBe(403);
  expect((await asViewer.json()).error.message).toMatch(/operator role/);
  await viewer.close();
  expect((await findThread(request, agentToken, key))!.human.revision).toBe(0);
});

test("human endpoints refuse agent tokens, other origins, bodies that are not JSON, and anonymous callers", async ({ page, baseURL, request, agentToken }) => {
  const key = uniqueId("guarded");
  const stored = await storePacket(request, agentToken, packetFor(key));
  const decision = { kind: "approved", packet_id: stored.packet_id, base_revision: 0 };
  const url = threadPath(key, "/decision");
  // The admin's browser context (signed in) is used for the session-cookie cases.
  const api = page.context().request;

  const withToken = await api.post(url, { headers: { ...fromPage(baseURL!), ...bearer(agentToken) }, data: decision });
  expect(withToken.status()).toBe(403);
  expect((await withToken.json()).error.message).toMatch(/API tokens cannot act as a person/);

  const otherOrigin = await api.post(url, { headers: { origin: "https://evil.example" }, data: decision });
  expect(otherOrigin.status()).toBe(403);

  const noOrigin = await api.post(url, { data: decision });
  expect(noOrigin.status()).toBe(403);

  const form = await api.post(url, { headers: fromPage(baseURL!), form: { kind: "approved", packet_id: stored.packet_id, base_revision: "0" } });
  expect(form.status()).toBe(415);

  const badField = await api.post(url, { headers: fromPage(baseURL!), data: { ...decision, kind: "maybe" } });
  expect(badField.status()).toBe(400);
  expect((await badField.json()).error.message).toMatch(/kind/);

  const nobody = await playwrightRequest.newContext({ baseURL, storageState: { cookies: [], origins: [] } });
  const anonymous = await nobody.post(url, { headers: fromPage(baseURL!), data: decision });
  expect(anonymous.status()).toBe(401);
  await nobody.dispose();

  expect((await findThread(request, agentToken, key))!.human.revision).toBe(0);
  const ok = await api.post(url, { headers: fromPage(baseURL!), data: decision });
  expect(ok.status(), await ok.text()).toBe(200);
});

test("a lost race on the board is told above the columns after the card moved away, with a link to act on the new state", async ({ page, request, agentToken, baseURL }) => {
  const key = uniqueId("race");
  const stored = await storePacket(request, agentToken, packetFor(key, { agent: `${key}-agent`, open_risks: [] }));
  // Without the live stream the board keeps showing what the person saw while someone else approves.
  await page.route("**/api/v1/stream**", (route) => route.abort());
  await page.goto(`/?q=${encodeURIComponent(key)}`);
  await expect(column(page, "Ready").getByTestId("board-card")).toHaveCount(1);
  const first = await page.request.post(threadPath(key, "/decision"), {
    headers: fromPage(baseURL!),
    data: { kind: "approved", packet_id: stored.packet_id, base_revision: 0 },
  });
  expect(first.status()).toBe(200);
  await page.getByRole("button", { name: new RegExp(`^Approve ${key}-agent`) }).click();
  // The refusal refreshes the board: the card moves to Approved, and the notice stays.
  await expect(column(page, "Approved").getByTestId("board-card")).toHaveCount(1);
  const notice = page.getByRole("alert").filter({ hasText: "Someone got there first" });
  await expect(notice).toContainText(`${key}-agent (${key}): nothing was written: now approved by`);
  await expect(notice.getByRole("link", { name: `${key}-agent (${key})` })).toHaveAttribute("href", `/threads/${encodeURIComponent(key)}`);
  await notice.getByRole("button", { name: "Dismiss" }).click();
  await expect(notice).toHaveCount(0);
});
