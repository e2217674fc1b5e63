import "server-only";
import { onLedger } from "../events/bus";

/** A background loop: one step at a time, on a timer and when woken. */
export interface PollingLoop {
  /** Runs a step soon (the ledger grew, a delivery was enqueued); a step in flight is followed by another. */
  wake(): void;
  /** Stops the loop; resolves once a step in flight has finished (nothing is left half-done by us). */
  stop(): Promise<void>;
}

export interface PollingLoopOptions {
  /** For log lines. */
  name: string;
  /** The wait between steps when there is nothing more to do (and after a failure). */
  intervalMs: number;
  /** Does one batch of work; true when there is more to do at once. */
  step: () => Promise<boolean>;
  /** Also wake on every in-process ledger announcement (lib/events/bus.ts). */
  wakeOnLedger?: boolean;
  /**
   * A woken step starts at least this long after the last one started, so that a burst of wakes
   * (the ledger moves tens of times a second under load) shares one step; 0 by default.
   */
  wakeGapMs?: number;
}

/**
 * Starts a loop whose timers are unref'd (it never keeps a process alive on
 * its own) and whose failures are logged, never thrown: the next step tries again.
 */
export function startPollingLoop(options: PollingLoopOptions): PollingLoop {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let wokenWhileRunning = false;
  let timerDueAt = 0;
  let lastStartedAt = -Infinity;

  const schedule = (ms: number) => {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    timerDueAt = performance.now() + ms;
    timer = setTimeout(run, ms);
    timer.unref();
  };
  /** How long a woken step waits: the rest of the gap since the last step started. */
  const wakeDelay = () => Math.max(0, lastStartedAt + (options.wakeGapMs ?? 0) - performance.now());

  function run(): void {
    timer = null;
    if (stopped || running) return;
    wokenWhileRunning = false;
    lastStartedAt = performance.now();
    running = (async () => {
      let more = false;
      try {
        // Never synchronously: `running` must be set before this can finish.
        await Promise.resolve();
        more = await options.step();
      } catch (error) {
        // The message only: a driver's error object may carry the values of its query.
        console.error(`baton: ${options.name} failed; trying again in ${options.intervalMs} ms: ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        running = null;
      }
      schedule(more ? 0 : wokenWhileRunning ? wakeDelay() : options.intervalMs);
    })();
  }

  const wake = () => {
    if (running) {
      wokenWhileRunning = true;
      return;
    }
    // A step already due sooner stays as it is.
    const delay = wakeDelay();
    if (!timer || timerDueAt > performance.now() + delay) schedule(delay);
  };
  const stopListening = options.wakeOnLedger ? onLedger(wake) : () => undefined;
  schedule(0);

  return {
    wake,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      stopListening();
      await running;
    },
  };
}
