import "server-only";
import { inTransaction, type Tx } from "../db/client";
import { BatonError } from "../core/errors";
import { announceLedger } from "../events/bus";
import { appendLedgerEvents } from "../events/ledger";
import type { Person } from "../auth/roles";

/**
 * Takes a thread off the board (the archived flag a producer's `status: "archived"` also sets);
 * a new packet re-opens it. Inside the caller's transaction; false when it was already archived.
 */
export async function archiveThreadIn(tx: Tx, threadKey: string, actor: string, reason: string, at: Date): Promise<boolean> {
  const { count } = await tx.thread.updateMany({ where: { key: threadKey, archived: false }, data: { archived: true, updatedAt: at } });
  if (!count) return false;
  await appendLedgerEvents(tx, [{ kind: "thread_archived", threadKey, actor, data: { reason } }], at);
  return true;
}

/** A person archives a thread (the merged pull request's one click). */
export async function archiveThread(person: Person, threadKey: string, reason: string): Promise<{ archived: boolean }> {
  const at = new Date();
  const archived = await inTransaction(async (tx) => {
    const thread = await tx.thread.findUnique({ where: { key: threadKey }, select: { archived: true } });
    if (!thread) throw new BatonError("not_found", `No thread has the key "${threadKey}".`);
    return archiveThreadIn(tx, threadKey, person.username, reason, at);
  });
  if (archived) announceLedger();
  return { archived };
}
