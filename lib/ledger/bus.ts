import { EventEmitter } from "node:events";

/**
 * In-process announcement that the ledger grew. Listeners (the live stream)
 * read the new events from the database themselves, so a missed announcement
 * costs latency, never data. Kept on globalThis: route handlers and the
 * instrumentation hook of one process share it.
 */
const holder = globalThis as unknown as { __batonLedgerBus?: EventEmitter };
const bus = (holder.__batonLedgerBus ??= new EventEmitter().setMaxListeners(0));

export function announceLedger(): void {
  bus.emit("ledger");
}

export function onLedger(listener: () => void): () => void {
  bus.on("ledger", listener);
  return () => bus.off("ledger", listener);
}
