import { afterAll, beforeAll } from "vitest";
import { resetConfig } from "../lib/server/config";

/**
 * For a test file whose webhooks post to a local receiver (127.0.0.1): sets
 * BATON_WEBHOOK_ALLOWED_TARGETS (lib/notify/targets.ts) for its tests and puts
 * the old value back after them (files share a worker's environment).
 */
export function allowWebhookTargetsForThisFile(value = "127.0.0.1"): void {
  const saved = process.env.BATON_WEBHOOK_ALLOWED_TARGETS;
  beforeAll(() => {
    process.env.BATON_WEBHOOK_ALLOWED_TARGETS = value;
    resetConfig();
  });
  afterAll(() => {
    setAllowedWebhookTargets(saved);
  });
}

/** Sets (or with undefined removes) BATON_WEBHOOK_ALLOWED_TARGETS and re-reads the environment. */
export function setAllowedWebhookTargets(value: string | undefined): void {
  if (value === undefined) delete process.env.BATON_WEBHOOK_ALLOWED_TARGETS;
  else process.env.BATON_WEBHOOK_ALLOWED_TARGETS = value;
  resetConfig();
}
