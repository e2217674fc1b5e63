/**
 * This process's ledger writers in one first-come, first-served queue
 * (docs/decisions/091-postgresql-writers-queue-in-process.md): on PostgreSQL a ledger write
 * transaction takes its turn here before it takes one of the writers' connections and the
 * advisory lock, so a queued writer holds no connection while it waits. `capacity` writers
 * hold a turn at once: one in the lock, the next already waiting at it.
 */
export class WriterTurns {
  private holders = 0;
  constructor(private readonly capacity = 1) {}
  // A Set keeps insertion order and lets a waiter that gave up leave from the middle.
  private readonly waiting = new Set<() => void>();

  /**
   * Waits for the turn, at most `maxWaitMs`; resolves to the function that ends it (once, and
   * hands it to the next waiter). Past the wait it rejects with the message of a transaction
   * that could not start in time (lib/db/errors.ts reads it as "the database is busy").
   */
  take(maxWaitMs: number): Promise<() => void> {
    if (this.holders < this.capacity) {
      this.holders++;
      return Promise.resolve(this.ender());
    }
    return new Promise((resolve, reject) => {
      const granted = () => {
        clearTimeout(timer);
        resolve(this.ender());
      };
      const timer = setTimeout(() => {
        this.waiting.delete(granted);
        reject(new Error(`Unable to start a transaction within ${maxWaitMs} ms.`));
      }, maxWaitMs);
      this.waiting.add(granted);
    });
  }

  /** How many writers wait for the turn (not counting the one that has it). */
  get queued(): number {
    return this.waiting.size;
  }

  private ender(): () => void {
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const next = this.waiting.values().next();
      if (next.done) {
        this.holders--;
        return;
      }
      this.waiting.delete(next.value);
      next.value();
    };
  }
}
