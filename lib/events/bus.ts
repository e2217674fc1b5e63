import "server-only";
import { EventEmitter } from "node:events";
import { singleton } from "../core/singleton";

/**
 * In-process announcement that the ledger grew. Listeners (the live stream)
 * read the new events from the database themselves, so a missed announcement
 * costs latency, never data. Kept on globalThis: route handlers and the
 * instrumentation hook of one process share it.
 */
const bus = singleton("LedgerBus", () => new EventEmitter().setMaxListeners(0));

export function announceLedger(): void {
  bus.emit("ledger");
}

export function onLedger(listener: () => void): () => void {
  bus.on("ledger", listener);
  return () => bus.off("ledger", listener);
}
