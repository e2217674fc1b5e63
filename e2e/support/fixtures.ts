import { execFileSync } from "node:child_process";
import { test as base } from "@playwright/test";
import { E2E_DATABASE_URL, E2E_WATCH_DIR } from "./paths";

/** Creates an API token in the server's database through the real CLI. */
export function createToken(name: string, scopes: string[]): string {
  return execFileSync("node", ["bin/baton.js", "token", "create", "--name", name, "--scope", ...scopes], {
    env: { ...process.env, DATABASE_URL: E2E_DATABASE_URL },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  }).trim();
}

/** Revokes a token by its public prefix (`btn_xxxxxxxx`) through the real CLI. */
export function revokeToken(token: string): void {
  const prefix = token.split("_").slice(0, 2).join("_");
  execFileSync("node", ["bin/baton.js", "token", "revoke", prefix], {
    env: { ...process.env, DATABASE_URL: E2E_DATABASE_URL },
    stdio: ["ignore", "pipe", "pipe"],
  });
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
    async ({}, provide) => provide(createToken(`e2e-agent-${process.pid}`, ["packets:write", "packets:read"])),
    { scope: "worker" },
  ],
  watchDir: async ({}, provide) => provide(E2E_WATCH_DIR),
});

export { expect } from "@playwright/test";
