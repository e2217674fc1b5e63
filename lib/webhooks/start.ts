import { startDeliveryWorker } from "./deliver";
import type { PollingLoop } from "./loop";
import { startWebhookNotifier } from "./notifier";

// Once per process, on globalThis: dev reloads and route bundles may load this module again.
const holder = globalThis as unknown as { __batonWebhookLoops?: { notifier: PollingLoop; worker: PollingLoop } };

/** Starts the notifier and the delivery worker of this server (lib/server/background.ts); a second call does nothing. */
export function startWebhookLoops(): void {
  if (holder.__batonWebhookLoops) return;
  const worker = startDeliveryWorker();
  const notifier = startWebhookNotifier({ onEnqueued: () => worker.wake() });
  holder.__batonWebhookLoops = { notifier, worker };
}
