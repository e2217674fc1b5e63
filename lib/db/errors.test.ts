import { afterEach, describe, expect, it, vi } from "vitest";
import { isBusyError, isConnectionLost, isTransactionStartTimeout } from "./errors";
import { BatonError } from "../core/errors";
import { errorResponse } from "../http/respond";

// The shapes a lost PostgreSQL connection takes, as seen from two Baton instances whose
// connections were terminated (e2e/instances.spec.ts) and from node-postgres and the adapter.
const adapterError = (cause: Record<string, unknown>) => Object.assign(new Error(String(cause.message ?? cause.kind)), { name: "DriverAdapterError", cause });
const terminated = { kind: "postgres", code: "57P01", originalCode: "57P01", severity: "FATAL", message: "terminating connection due to administrator command" };
const LOST: [string, unknown][] = [
  ["the adapter's error for a terminated backend", adapterError(terminated)],
  [
    "a raw statement's P2010 carrying it in meta.driverAdapterError",
    Object.assign(new Error("Raw query failed. Code: `57P01`. Message: `terminating connection due to administrator command`"), {
      name: "PrismaClientKnownRequestError",
      code: "P2010",
      meta: { driverAdapterError: adapterError(terminated) },
    }),
  ],
  ["node-postgres on a connection that already failed", new Error("Client has encountered a connection error and is not queryable")],
  ["node-postgres when the server hangs up", new Error("Connection terminated unexpectedly")],
  ["the adapter's ConnectionClosed (Prisma P1017)", adapterError({ kind: "ConnectionClosed" })],
  ["the adapter's DatabaseNotReachable (Prisma P1001)", adapterError({ kind: "DatabaseNotReachable", host: "127.0.0.1", port: 5432 })],
  ["Prisma's P1001", Object.assign(new Error("Can't reach database server"), { code: "P1001" })],
  ["a refused socket", Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED", syscall: "connect", errno: -111 })],
  ["SQLSTATE 08006", adapterError({ kind: "postgres", code: "08006", originalCode: "08006", message: "connection failure" })],
];
const NOT_LOST: [string, unknown][] = [
  ["a unique violation", Object.assign(new Error("Unique constraint failed"), { code: "P2002", meta: { driverAdapterError: adapterError({ kind: "UniqueConstraintViolation" }) } })],
  ["a serialization failure", adapterError({ kind: "TransactionWriteConflict", originalCode: "40001" })],
  ["SQLite busy", Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" })],
  ["a plain bug", new TypeError("cannot read properties of undefined")],
  ["a BatonError", new BatonError("conflict", "someone else acted first")],
  ["nothing", undefined],
];

describe("isConnectionLost", () => {
  it.each(LOST)("is true for %s", (_what, error) => expect(isConnectionLost(error)).toBe(true));
  it.each(NOT_LOST)("is false for %s", (_what, error) => expect(isConnectionLost(error)).toBe(false));

  it("is not a busy database, and busy errors nested in meta.driverAdapterError are still busy", () => {
    for (const [, error] of LOST) expect(isBusyError(error)).toBe(false);
    const lockTimeout = Object.assign(new Error("Raw query failed. Code: `55P03`."), { code: "P2010", meta: { driverAdapterError: adapterError({ kind: "postgres", code: "55P03", originalCode: "55P03" }) } });
    expect(isBusyError(lockTimeout)).toBe(true);
  });

  it("survives an error whose causes form a cycle", () => {
    const error = new Error("outer") as Error & { cause?: unknown };
    error.cause = { meta: { driverAdapterError: error } };
    expect(isConnectionLost(error)).toBe(false);
  });
});

describe("errorResponse for a lost connection", () => {
  afterEach(() => vi.restoreAllMocks());

  it.each(LOST)("answers 503 with Retry-After, not 500, for %s; the log has one line", async (_what, error) => {
    const log = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const response = errorResponse(error);
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("1");
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("unavailable");
    expect(log).toHaveBeenCalledTimes(1);
    expect(String(log.mock.calls[0]![0])).toMatch(/^baton: the database connection was lost \(.+\); answered 503$/);
  });

  it("still answers 500 for anything else", () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    expect(errorResponse(new TypeError("a bug")).status).toBe(500);
  });
});

describe("errorResponse for a transaction that found no free connection in time", () => {
  afterEach(() => vi.restoreAllMocks());

  // Seen under twice the load a server can take, on PostgreSQL: Prisma's interactive transaction and decision 083's own path.
  const TIMED_OUT: [string, unknown][] = [
    ["Prisma's P2028", Object.assign(new Error("Transaction API error: Unable to start a transaction in the given time."), { name: "PrismaClientKnownRequestError", code: "P2028" })],
    ["the adapter path's wait", new Error("Unable to start a transaction within 10000 ms.")],
  ];

  it.each(TIMED_OUT)("answers 503 with Retry-After, not 500, for %s; the log has one line without a stack", async (_what, error) => {
    const log = vi.spyOn(console, "error").mockImplementation(() => undefined);
    expect(isTransactionStartTimeout(error)).toBe(true);
    const response = errorResponse(error);
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("1");
    expect(((await response.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: "unavailable", message: "The database is busy; retry shortly." });
    expect(log).toHaveBeenCalledTimes(1);
    expect(String(log.mock.calls[0]![0])).not.toMatch(/\n\s+at /);
  });

  it("leaves other transaction errors a logged 500", () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const closed = Object.assign(new Error("Transaction API error: Transaction already closed: A commit cannot be executed on an expired transaction."), { code: "P2028" });
    expect(isTransactionStartTimeout(closed)).toBe(false);
    expect(errorResponse(closed).status).toBe(500);
  });
});
