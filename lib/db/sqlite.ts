import "server-only";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import type { SqlDriverAdapter, SqlDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import type BetterSqlite3 from "better-sqlite3";
import { PrismaClient } from "../generated/prisma/client";
import { config, sqliteFilePath } from "../server/config";

/**
 * How long SQLite itself may wait for another process's lock. better-sqlite3 waits
 * on the main thread, freezing every request of the process meanwhile (5 s stalls
 * were measured), so it gets a moment only; the rest of BATON_SQLITE_BUSY_TIMEOUT_MS
 * is waited asynchronously by inTransaction.
 */
const SQLITE_LOCK_WAIT_MS = 20;

/** Opens the SQLite file (WAL, full sync, foreign keys); `onConnection` gets the adapter and its one connection. */
export async function openSqlite(
  url: string,
  onConnection: (adapter: SqlDriverAdapter, connection: BetterSqlite3.Database) => void,
): Promise<PrismaClient> {
  const file = sqliteFilePath(url);
  mkdirSync(path.dirname(file), { recursive: true });
  const timeout = Math.min(SQLITE_LOCK_WAIT_MS, config().BATON_SQLITE_BUSY_TIMEOUT_MS);
  const factory = new PrismaBetterSQLite3({ url: `file:${file}`, timeout });
  // Keep a hand on the adapter's connection: the adapter makes exactly one per client.
  const adapter: SqlDriverAdapterFactory = {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => {
      const connected = await factory.connect();
      onConnection(connected, (connected as unknown as { client: BetterSqlite3.Database }).client);
      return connected;
    },
  };
  const client = new PrismaClient({ adapter });
  // Per-connection settings: the adapter keeps one connection for the process.
  await client.$queryRawUnsafe("PRAGMA journal_mode = WAL");
  await client.$executeRawUnsafe("PRAGMA synchronous = FULL");
  await client.$executeRawUnsafe("PRAGMA foreign_keys = ON");
  return client;
}
