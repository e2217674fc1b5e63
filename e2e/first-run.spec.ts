import { expect, test } from "@playwright/test";
import { ADMIN, ADMIN_STATE } from "./support/people";

/**
 * A fresh install: the first visit creates the admin. Runs first (its own
 * Playwright project) and saves the admin's session for every later spec.
 */
test.use({ storageState: { cookies: [], origins: [] } });

test("the first visit to a fresh install creates the admin, who is then signed in", async ({ page, request }) => {
  // Nothing is readable before anyone exists.
  expect((await request.get("/api/v1/board")).status()).toBe(401);
  await page.goto("/");
  await expect(page).toHaveURL(/\/setup$/);
  await page.getByLabel("Username").fill(ADMIN.username);
  await page.getByLabel("Password", { exact: true }).fill(ADMIN.password);
  await page.getByLabel("Confirm password").fill(ADMIN.password);
  await page.getByRole("button", { name: "Create admin account" }).click();
  await expect(page).toHaveURL(/\/$/);
  await expect(page.getByRole("banner").getByText(`${ADMIN.username} (admin)`)).toBeVisible();
  const cookie = (await page.context().cookies()).find((entry) => entry.name === "baton_session");
  expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Lax", secure: false, path: "/" });
  await page.context().storageState({ path: ADMIN_STATE });

  // Once an admin exists, the first-run page is closed: it sends people to sign in, and its API refuses.
  const again = await request.post("/api/v1/setup", {
    headers: { origin: new URL(page.url()).origin },
    data: { username: "second-admin", password: "another long password" },
  });
  expect(again.status()).toBe(409);
  await page.context().clearCookies();
  await page.goto("/setup");
  await expect(page).toHaveURL(/\/sign-in/);
});
