import { BatonError } from "../core/errors";

/**
 * What a database error means for the caller, whatever wraps it: Prisma's errors
 * carry the driver's in `cause`, `meta` or `meta.driverAdapterError` (a raw
 * statement's P2010), the adapter's in `cause`. Free of database clients, so
 * that lib/http/respond.ts can use it.
 */

/** The error and every error or detail object inside it (cause, meta, the adapter's error), once each. */
export function* errorChain(error: unknown): Generator<Record<string, unknown>> {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length) {
    const current = queue.shift();
    if (!current || typeof current !== "object" || seen.has(current)) continue;
    seen.add(current);
    const record = current as Record<string, unknown>;
    yield record;
    queue.push(record.cause, record.meta, record.driverAdapterError);
  }
}

// SQLite's busy codes; PostgreSQL's serialization failure, deadlock and lock timeout
// (SQLSTATE 40001, 40P01, 55P03; Prisma's P2034 says the same).
const BUSY_CODES = new Set(["SQLITE_BUSY", "SQLITE_BUSY_SNAPSHOT", "SQLITE_LOCKED", "40001", "40P01", "55P03", "P2034"]);

/** True for a database that is busy right now (another writer), worth a retry. */
export function isBusyError(error: unknown): boolean {
  for (const record of errorChain(error)) {
    if (typeof record.code === "string" && BUSY_CODES.has(record.code)) return true;
    if (record.kind === "SocketTimeout") return true;
    if (typeof record.originalCode === "string" && BUSY_CODES.has(record.originalCode)) return true;
    if (typeof record.kind === "string" && /TransactionWriteConflict|SerializationFailure/.test(record.kind)) return true;
    if (typeof record.message === "string" && /SQLITE_BUSY|database is locked|SocketTimeout/.test(record.message)) return true;
  }
  return false;
}

// PostgreSQL ended the connection or could not be reached: a server restart, an
// administrator's pg_terminate_backend, a dropped network. SQLSTATE 57P01-57P03
// (admin, crash shutdown, cannot connect now) and class 08 (connection exception);
// the socket's own codes; Prisma's P1001 (cannot reach) and P1017 (server closed
// the connection), which the adapter calls DatabaseNotReachable and ConnectionClosed.
const CONNECTION_CODES = new Set([
  "57P01", "57P02", "57P03", "08000", "08001", "08003", "08004", "08006",
  "ECONNRESET", "ECONNREFUSED", "EPIPE", "P1001", "P1017",
]);
const CONNECTION_KINDS = new Set(["ConnectionClosed", "DatabaseNotReachable"]);
// node-postgres throws these as plain Errors, without a code.
const CONNECTION_MESSAGES = /^(Connection terminated|Client has encountered a connection error and is not queryable|Client was closed and is not queryable)/;

/** True when the database connection was lost or could not be made; a new connection may work. */
export function isConnectionLost(error: unknown): boolean {
  for (const record of errorChain(error)) {
    if (typeof record.code === "string" && CONNECTION_CODES.has(record.code)) return true;
    if (typeof record.originalCode === "string" && CONNECTION_CODES.has(record.originalCode)) return true;
    if (typeof record.kind === "string" && CONNECTION_KINDS.has(record.kind)) return true;
    if (typeof record.message === "string" && CONNECTION_MESSAGES.test(record.message)) return true;
  }
  return false;
}

/** The 503 a lost connection is answered with (logged in one line: the operator wants to know, without a stack per request). */
export function connectionLostError(error: unknown): BatonError {
  const message = error instanceof Error ? error.message.trim().split("\n").at(-1) : String(error);
  console.error(`baton: the database connection was lost (${message}); answered 503`);
  return new BatonError("unavailable", "The database could not be reached; retry shortly.", null, 1);
}

/** The 503 of a database that stayed busy (another writer, or no free connection) past the wait: the client retries. */
export const databaseBusyError = () => new BatonError("unavailable", "The database is busy; retry shortly.", null, 1);

// No pooled connection came within the transaction's wait (Prisma's P2028 says "in the given
// time"; decision 083's own path says "within N ms"): the server is overloaded, not broken.
const NO_CONNECTION_IN_TIME = /Unable to start a transaction (in the given time|within \d+ ms)/;

/** True when a transaction could not start because every pooled connection stayed busy for the whole wait. */
export function isTransactionStartTimeout(error: unknown): boolean {
  for (const record of errorChain(error)) if (typeof record.message === "string" && NO_CONNECTION_IN_TIME.test(record.message)) return true;
  return false;
}

/** Any error as the one error type: a BatonError as it is, a lost connection or an overloaded pool as 503, anything else as a logged 500. */
export function toBatonError(error: unknown): BatonError {
  if (error instanceof BatonError) return error;
  // A database restart or a dropped connection: the pool connects afresh, the client retries.
  if (isConnectionLost(error)) return connectionLostError(error);
  if (isTransactionStartTimeout(error)) {
    console.error("baton: no database connection was free within the transaction's wait; answered 503");
    return databaseBusyError();
  }
  // Never echo internals (or a secret inside a driver message) to the caller.
  console.error("baton: unexpected error", error instanceof Error ? error.stack : error);
  return new BatonError("internal", "Baton failed to handle this request; it was logged on the server.");
}
