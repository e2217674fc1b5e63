import { setRecheckIntervalForTests } from "../lib/auth/reader-checks";

/** Runs `test` with waiting reads and streams re-checked every 50 ms, then puts the production interval back. */
export async function withQuickRechecks(test: () => Promise<void>): Promise<void> {
  const restore = setRecheckIntervalForTests(50);
  try {
    await test();
  } finally {
    restore();
  }
}
