import "server-only";
import { config } from "../../server/config";
import { recordWatchdogFindings } from "./findings";
import { checkStale } from "./stale";
import { processSlot } from "../../core/singleton";

/**
 * The watchdog's scheduled check, once per server process: every
 * BATON_STALE_CHECK_SECONDS it records new stale spells and new findings.
 * Several instances may run it on one database: each record is written once
 * (stale.ts, findings.ts). A failure is logged and the next round tries again.
 */

interface Watchdog {
  timer: NodeJS.Timeout;
  /** The round under way, if any: a slow one is not overlapped by the next. */
  round: Promise<void> | null;
}

// On globalThis: instrumentation and route bundles may each hold a copy of this module.
const running = processSlot<Watchdog>("Watchdog");

/** One round: stale spells, then findings. Never throws. */
export async function runWatchdogRound(now: Date = new Date()): Promise<void> {
  try {
    await checkStale(now);
  } catch (error) {
    console.error("baton: watchdog: the stale check failed; it runs again at the next round", error);
  }
  try {
    await recordWatchdogFindings(now);
  } catch (error) {
    console.error("baton: watchdog: recording findings failed; it runs again at the next round", error);
  }
}

function tick(watchdog: Watchdog): void {
  if (watchdog.round) return;
  watchdog.round = runWatchdogRound().finally(() => {
    watchdog.round = null;
  });
}

/** Starts the scheduled check unless this process already runs it; the first round runs at once. */
export function startWatchdog(): void {
  if (running.value) return;
  const intervalMs = config().BATON_STALE_CHECK_SECONDS * 1000;
  const watchdog: Watchdog = { timer: setInterval(() => tick(watchdog), intervalMs), round: null };
  // The check must never keep a process alive on its own.
  watchdog.timer.unref();
  running.value = watchdog;
  tick(watchdog);
}

/** Stops the scheduled check and waits for the round under way (tests, shutdown). */
export async function stopWatchdog(): Promise<void> {
  const watchdog = running.value;
  running.value = undefined;
  if (!watchdog) return;
  clearInterval(watchdog.timer);
  await watchdog.round;
}
