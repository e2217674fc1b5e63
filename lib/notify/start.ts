import "server-only";
import { startDeliveryWorker } from "./deliver";
import type { PollingLoop } from "./loop";
import { startWebhookNotifier } from "./notifier";
import { processSlot } from "../core/singleton";

// Once per process, on globalThis: dev reloads and route bundles may load this module again.
const loops = processSlot<{ notifier: PollingLoop; worker: PollingLoop }>("WebhookLoops");

/** Starts the notifier and the delivery worker of this server (lib/server/background.ts); a second call does nothing. */
export function startWebhookLoops(): void {
  if (loops.value) return;
  const worker = startDeliveryWorker();
  const notifier = startWebhookNotifier({ onEnqueued: () => worker.wake() });
  loops.value = { notifier, worker };
}
