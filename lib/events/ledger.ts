import "server-only";
import { sqlExecutor, type SqlExecutor, type Tx } from "../db/client";
import { insertRows, type TableInsert } from "../db/sql";
import { announceLedger } from "./bus";
import type { LedgerKind } from "./dto";

// The browser's side (the event DTO, the kinds) lives in ./dto.ts; server code may keep importing it from here.
export { LEDGER_KINDS, ledgerEventDto, toLedgerEventDto, type LedgerEventDto, type LedgerKind } from "./dto";

export interface NewLedgerEvent {
  kind: LedgerKind;
  threadKey?: string | null;
  versionId?: string | null;
  actor: string;
  data?: Record<string, unknown>;
  /** When it happened; defaults to the time given to appendLedgerEvents. */
  at?: Date;
}

const EVENT_COLUMNS = ["at", "kind", "threadKey", "versionId", "actor", "data"] as const;

/** Appends events inside the caller's transaction; subscribers hear of them after commit. */
export async function appendLedgerEvents(tx: Tx, events: NewLedgerEvent[], at: Date): Promise<void> {
  await writeLedgerEvents(await sqlExecutor(tx), events, at);
}

/** appendLedgerEvents for a transaction of raw statements (lib/db/client.ts inSqlTransaction). */
export async function writeLedgerEvents(sql: SqlExecutor, events: NewLedgerEvent[], at: Date): Promise<void> {
  const { table, columns, rows } = ledgerEventsInsert(events, at);
  await insertRows(sql, table, columns, rows);
}

/** The LedgerEvent rows of `events`, for a writer that sends them with its other rows (lib/db/sql.ts insertTogether). */
export function ledgerEventsInsert(events: NewLedgerEvent[], at: Date): TableInsert {
  return {
    table: "LedgerEvent",
    columns: EVENT_COLUMNS,
    rows: events.map((event) => [
      event.at ?? at,
      event.kind,
      event.threadKey ?? null,
      event.versionId ?? null,
      event.actor,
      JSON.stringify(event.data ?? {}),
    ]),
  };
}

/** Records events on their own, outside any other write (e.g. an ingest error). */
export async function recordLedgerEvents(events: NewLedgerEvent[]): Promise<void> {
  const { inTransaction } = await import("../db/client");
  await inTransaction((tx) => appendLedgerEvents(tx, events, new Date()));
  announceLedger();
}
