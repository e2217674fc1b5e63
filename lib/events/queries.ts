import "server-only";
import { database } from "../db/client";
import { toLedgerEventDto, type LedgerEventDto, type LedgerKind } from "./ledger";

/** The newest ledger events of some kinds, newest first. */
export async function listRecentEvents(kinds: LedgerKind[], limit = 20): Promise<LedgerEventDto[]> {
  const db = await database();
  const rows = await db.ledgerEvent.findMany({
    where: { kind: { in: kinds } },
    orderBy: { seq: "desc" },
    take: limit,
  });
  return rows.map(toLedgerEventDto);
}

/** A thread's ledger, newest first. */
export async function listThreadEvents(threadKey: string, limit = 200): Promise<LedgerEventDto[]> {
  const db = await database();
  const rows = await db.ledgerEvent.findMany({ where: { threadKey }, orderBy: { seq: "desc" }, take: limit });
  return rows.map(toLedgerEventDto);
}
