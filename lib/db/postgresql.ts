import "server-only";
import type { IsolationLevel, SqlDriverAdapter, SqlDriverAdapterFactory, SqlQuery, Transaction } from "@prisma/driver-adapter-utils";
import type pg from "pg";
import type { PrismaClient } from "../generated/prisma/client";

/** Opening PostgreSQL, and the two mends its driver stack needs (docs/decisions/023-postgresql.md, 6). */

/** Connections per instance; PostgreSQL's default max_connections (100) fits several instances. */
export const POSTGRESQL_POOL_SIZE = 10;

/** A transaction whose COMMIT or ROLLBACK fails gives its connection back to the pool, once (Prisma never does). */
export function releaseOnFailedEnd(transaction: Transaction): Transaction {
  let released = false;
  const once = (end: () => Promise<void>) => async () => {
    if (released) return;
    released = true;
    await end();
  };
  const commit = once(transaction.commit.bind(transaction));
  const rollback = once(transaction.rollback.bind(transaction));
  const executeRaw = transaction.executeRaw.bind(transaction);
  return Object.assign(transaction, {
    commit,
    rollback,
    async executeRaw(query: SqlQuery): Promise<number> {
      try {
        return await executeRaw(query);
      } catch (error) {
        if (/^\s*(COMMIT|ROLLBACK)\s*$/i.test(query.sql)) await rollback().catch(() => undefined);
        throw error;
      }
    },
  });
}

/** Every pooled connection keeps an error listener for its whole life: an unheard 'error' event would crash the process. */
export function listenOnEveryConnection(pool: pg.Pool): void {
  pool.on("connect", (client) => client.on("error", () => undefined));
}

/**
 * Opens the client; `onAdapter` gets the driver adapter once Prisma connects it, so that the
 * hot paths' reads and write transactions can skip Prisma's per-statement pipeline (lib/db/client.ts).
 */
export async function openPostgresql(url: string, onAdapter?: (adapter: SqlDriverAdapter) => void): Promise<PrismaClient> {
  // Loaded only on PostgreSQL: a client generated from prisma/postgresql/schema/,
  // the same models as the SQLite one (lib/db/migrate/schema-source.ts), so the same type.
  const [{ PrismaPg }, generated] = await Promise.all([
    import("@prisma/adapter-pg"),
    import("../generated/prisma-postgresql/client"),
  ]);
  const factory = new PrismaPg({ connectionString: url, max: POSTGRESQL_POOL_SIZE });
  const adapter: SqlDriverAdapterFactory = {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => {
      const connected = await factory.connect();
      listenOnEveryConnection(connected.underlyingDriver());
      const startTransaction = connected.startTransaction.bind(connected);
      const mended = Object.assign(connected, {
        startTransaction: async (isolationLevel?: IsolationLevel) => releaseOnFailedEnd(await startTransaction(isolationLevel)),
      });
      onAdapter?.(mended);
      return mended;
    },
  };
  return new generated.PrismaClient({ adapter }) as unknown as PrismaClient;
}
