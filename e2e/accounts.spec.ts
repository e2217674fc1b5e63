import { request as playwrightRequest } from "@playwright/test";
import { expect, test } from "./support/fixtures";
import { bearer, packetFor, postPacket, uniqueId } from "./support/api";
import { createPerson, fromPage } from "./support/people";

/** Sign-in, sign-out, and the admin pages for people and API tokens. */

const signedOut = { storageState: { cookies: [], origins: [] } };

test.describe("signed out", () => {
  test.use(signedOut);

  test("every page needs sign-in; a wrong password is refused; the right one leads back to the page asked for", async ({ page, baseURL }) => {
    const operator = await createPerson(baseURL!, "operator");
    await page.goto("/questions");
    await expect(page).toHaveURL(/\/sign-in\?next=%2Fquestions$/);
    await page.getByLabel("Username").fill(operator.username);
    await page.getByLabel("Password").fill("not the password at all");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.getByRole("alert").filter({ hasText: "Wrong username or password." })).toBeVisible();

    await page.getByLabel("Password").fill(operator.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page).toHaveURL(/\/questions$/);
    await expect(page.getByRole("banner").getByText(`${operator.username} (operator)`)).toBeVisible();
    // An operator is not an admin: no admin links, and the admin pages send them away.
    await expect(page.getByRole("link", { name: "Users" })).toHaveCount(0);
    await page.goto("/admin/users");
    await expect(page).toHaveURL(/\/\?denied=admin$/);
    await expect(page.getByRole("alert").filter({ hasText: "That page needs the admin role; you are operator." })).toBeVisible();
  });

  test("sign-out ends the session on the server: a kept copy of the cookie no longer works", async ({ page, baseURL }) => {
    const viewer = await createPerson(baseURL!, "viewer");
    await page.goto("/sign-in");
    await page.getByLabel("Username").fill(viewer.username);
    await page.getByLabel("Password").fill(viewer.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.getByRole("banner").getByText(`${viewer.username} (viewer)`)).toBeVisible();
    const session = (await page.context().cookies()).find((cookie) => cookie.name === "baton_session")!;
    const copy = await playwrightRequest.newContext({ baseURL, extraHTTPHeaders: { cookie: `baton_session=${session.value}` } });
    expect((await copy.get("/api/v1/board")).status()).toBe(200);

    await page.getByRole("button", { name: "Sign out" }).click();
    await expect(page).toHaveURL(/\/sign-in/);
    expect((await copy.get("/api/v1/board")).status()).toBe(401);
    await copy.dispose();
    await page.goto("/");
    await expect(page).toHaveURL(/\/sign-in/);
  });

  test("each sign-in gets a new session id", async ({ baseURL }) => {
    const viewer = await createPerson(baseURL!, "viewer");
    const secrets: string[] = [];
    for (let i = 0; i < 2; i++) {
      const client = await playwrightRequest.newContext({ baseURL });
      const response = await client.post("/api/v1/session", { headers: fromPage(baseURL!), data: { username: viewer.username, password: viewer.password } });
      expect(response.status()).toBe(200);
      const cookie = response.headers()["set-cookie"]!;
      expect(cookie).toMatch(/HttpOnly/);
      expect(cookie).toMatch(/SameSite=Lax/);
      expect(cookie).not.toMatch(/Secure/);
      secrets.push(/baton_session=([^;]+)/.exec(cookie)![1]!);
      await client.dispose();
    }
    expect(secrets[0]).not.toBe(secrets[1]);
  });
});

test("an admin changes a person's role on the users page, and the server enforces it on the next request", async ({ page, browser, baseURL }) => {
  const person = await createPerson(baseURL!, "viewer");
  const theirs = await browser.newContext({ baseURL, ...signedOut });
  const signIn = await theirs.request.post("/api/v1/session", { headers: fromPage(baseURL!), data: { username: person.username, password: person.password } });
  expect(signIn.status()).toBe(200);

  await page.goto("/admin/users");
  const role = page.getByLabel(`Role of ${person.username}`);
  await role.selectOption("operator");
  await expect(role).toHaveValue("operator");
  await expect.poll(async () => (await (await theirs.request.get("/api/v1/session")).json()).user.role).toBe("operator");

  await page.getByRole("button", { name: `Disable ${person.username}` }).click();
  await expect(page.getByRole("button", { name: `Enable ${person.username}` })).toBeVisible();
  // Disabling ends their sessions at once.
  expect((await theirs.request.get("/api/v1/board")).status()).toBe(401);
  await theirs.close();
});

test("an admin creates a token in the browser (shown once), it works, and revoking it refuses the next request", async ({ page, request }) => {
  const name = uniqueId("ui-token");
  const project = uniqueId("ui-project");
  await page.goto("/admin/tokens");
  const form = page.getByRole("form", { name: "Create a token" });
  await form.getByLabel("Name").fill(name);
  // The project is the next stop after the name, typed from the keyboard (decision 056).
  await page.keyboard.press("Tab");
  await expect(form.getByLabel("Project (optional)")).toBeFocused();
  await page.keyboard.type(project);
  await form.getByRole("checkbox", { name: "packets:read" }).check();
  await form.getByRole("button", { name: "Create token" }).click();
  const shown = page.getByLabel(`New token for ${name}`);
  const token = await shown.inputValue();
  expect(token).toMatch(/^btn_[a-z0-9]{8}_[A-Za-z0-9]{32}$/);
  await expect(page.getByText("Shown once: copy it now. Baton keeps only a hash.")).toBeVisible();

  const row = page.getByRole("table", { name: "API tokens" }).getByRole("row").filter({ hasText: name });
  await expect(row).toContainText(`${token.split("_").slice(0, 2).join("_")}...${token.slice(-4)}`);
  await expect(row).toContainText("packets:read");
  await expect(row).toContainText(project);
  const stored = await postPacket(request, token, packetFor(uniqueId("via-ui-token"), { thread: undefined, task_id: "T-001" }));
  expect(stored.status()).toBe(201);
  expect((await stored.json()).thread_key).toBe(`${project}@#T-001`);

  await page.reload();
  await expect(page.getByText(token)).toHaveCount(0);
  await expect(page.locator(`input[value="${token}"]`)).toHaveCount(0);
  await page.getByRole("button", { name: `Revoke ${name}` }).click();
  await page.getByRole("button", { name: `Confirm revoke ${name}` }).click();
  await expect(row).not.toContainText(/^no$/);
  await expect.poll(async () => (await request.get("/api/v1/threads", { headers: bearer(token) })).status()).toBe(401);
});
