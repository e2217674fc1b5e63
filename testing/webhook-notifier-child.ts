/**
 * For lib/notify/notifier.test.ts: a second process running the notifier on
 * the same database. Says "ready" once the database is open, starts on a line
 * from stdin, steps until the ledger is caught up, then prints what it enqueued.
 */
import { closeDatabase, database } from "../lib/db/client";
import { notifyStep } from "../lib/notify/notifier";

await database();
process.stdout.write("ready\n");
await new Promise((resolve) => process.stdin.once("data", resolve));
let pending = 0;
let lost = 0;
for (;;) {
  const step = await notifyStep({ batchSize: 2 });
  pending += step.pending;
  lost += step.raced;
  if (!step.more) break;
}
process.stdout.write(`${JSON.stringify({ pending, lost })}\n`);
await closeDatabase();
process.stdin.destroy();
