/** How often a busy ledger may refetch a live view by default: at most twice a second, the last event always followed. */
export const REFRESH_EVERY_MS = 500;

/**
 * Runs `refresh` at most once per gap (given per call, so a run of heartbeats can wait
 * longer than a new packet): an earlier pending run is kept, a later one is brought
 * forward, and the last call is always followed by a run.
 */
export class RefreshScheduler {
  private last = 0;
  private pending: { at: number; timer: ReturnType<typeof setTimeout> } | null = null;

  constructor(private readonly refresh: () => void) {}

  schedule(minGapMs: number = REFRESH_EVERY_MS): void {
    const now = Date.now();
    const at = Math.max(now, this.last + minGapMs);
    if (this.pending && this.pending.at <= at) return;
    if (this.pending) clearTimeout(this.pending.timer);
    this.pending = {
      at,
      timer: setTimeout(() => {
        this.pending = null;
        this.last = Date.now();
        this.refresh();
      }, at - now),
    };
  }

  /** Drops a pending run (the view is gone). */
  cancel(): void {
    if (this.pending) clearTimeout(this.pending.timer);
    this.pending = null;
  }
}
