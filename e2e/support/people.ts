import { readFile } from "node:fs/promises";
import path from "node:path";
import { expect, request as playwrightRequest, type APIRequestContext, type Browser, type BrowserContext } from "@playwright/test";
import type { Role } from "../../lib/auth/roles";
import { uniqueId } from "./api";
import { E2E_ROOT } from "./paths";

/** The admin the first-run spec creates; every later spec's browser starts signed in as them. */
export const ADMIN = { username: "admin", password: "e2e admin password 1" } as const;
export const ADMIN_STATE = path.join(E2E_ROOT, "admin-state.json");

/** Headers of a request from Baton's own pages (human endpoints refuse other origins). */
export const fromPage = (baseURL: string) => ({ origin: new URL(baseURL).origin });

/** An HTTP client signed in as the admin, for setting up people. */
export function adminApi(baseURL: string): Promise<APIRequestContext> {
  return playwrightRequest.newContext({ baseURL, storageState: ADMIN_STATE });
}

export interface TestPerson {
  username: string;
  password: string;
  role: Role;
}

/** Creates a person with `role` through the admin API. */
export async function createPerson(baseURL: string, role: Role): Promise<TestPerson> {
  const person = { username: uniqueId(role).slice(0, 40).toLowerCase(), password: `${role} password for e2e`, role };
  const admin = await adminApi(baseURL);
  const response = await admin.post("/api/v1/users", { headers: fromPage(baseURL), data: person });
  expect(response.status(), await response.text()).toBe(201);
  await admin.dispose();
  return person;
}

/** Signs an HTTP client or a browser context in through the sign-in endpoint (the session cookie lands in it). */
export async function signInApi(client: APIRequestContext, baseURL: string, person: { username: string; password: string }): Promise<void> {
  const response = await client.post("/api/v1/session", { headers: fromPage(baseURL), data: { username: person.username, password: person.password } });
  expect(response.status(), await response.text()).toBe(200);
}

/** A fresh browser context signed in as `person`. */
export async function contextAs(browser: Browser, baseURL: string, person: TestPerson): Promise<BrowserContext> {
  const context = await browser.newContext({ baseURL, storageState: { cookies: [], origins: [] } });
  await signInApi(context.request, baseURL, person);
  return context;
}

/** The admin's session as a Cookie header, for clients outside a browser context. */
export async function adminCookie(): Promise<string> {
  const state = JSON.parse(await readFile(ADMIN_STATE, "utf8")) as { cookies: { name: string; value: string }[] };
  const session = state.cookies.find((cookie) => cookie.name === "baton_session");
  if (!session) throw new Error(`no session cookie in ${ADMIN_STATE}: the first-run spec saves it`);
  return `baton_session=${session.value}`;
}
