import { test as base } from "@playwright/test";
import { createdTokenSchema } from "../../lib/auth/dto";
import { E2E_BASE_URL, E2E_WATCH_DIR } from "./paths";
import { adminApi, fromPage } from "./people";

/**
 * Creates an API token through the admin API, as the tokens page does. (`baton token create`
 * itself is tested in cli/main.test.ts; a CLI process per token cost about a second of CPU
 * each, twice per run.)
 */
export async function createToken(name: string, scopes: string[]): Promise<string> {
  const admin = await adminApi(E2E_BASE_URL);
  try {
    const response = await admin.post("/api/v1/tokens", { headers: fromPage(E2E_BASE_URL), data: { name, scopes } });
    if (response.status() !== 201) throw new Error(`creating token ${name}: ${response.status()} ${await response.text()}`);
    return createdTokenSchema.parse(await response.json()).token;
  } finally {
    await admin.dispose();
  }
}

/** Revokes a token through the admin API, by its public prefix (`btn_xxxxxxxx`). */
export async function revokeToken(token: string): Promise<void> {
  const prefix = token.split("_").slice(0, 2).join("_");
  const admin = await adminApi(E2E_BASE_URL);
  try {
    const response = await admin.delete(`/api/v1/tokens/${encodeURIComponent(prefix)}`, { headers: fromPage(E2E_BASE_URL) });
    if (!response.ok()) throw new Error(`revoking ${prefix}: ${response.status()} ${await response.text()}`);
  } finally {
    await admin.dispose();
  }
}

export const test = base.extend<{ watchDir: string }, { agentToken: string }>({
  // Specs' own HTTP client carries no one's session: what it may read depends on the token it sends.
  // (The pages' browser context starts signed in as the admin; see playwright.config.ts.)
  request: async ({ playwright, baseURL }, provide) => {
    const anonymous = await playwright.request.newContext({ baseURL, storageState: { cookies: [], origins: [] } });
    await provide(anonymous);
    await anonymous.dispose();
  },
  agentToken: [
    async ({}, provide) => provide(await createToken(`e2e-agent-${process.pid}`, ["packets:write", "packets:read"])),
    { scope: "worker" },
  ],
  watchDir: async ({}, provide) => provide(E2E_WATCH_DIR),
});

export { expect } from "@playwright/test";
