import "server-only";
import type { IsolationLevel, SqlDriverAdapter, SqlDriverAdapterFactory, SqlQuery, Transaction } from "@prisma/driver-adapter-utils";
import type pg from "pg";
import type { PrismaClient } from "../generated/prisma/client";

/** Opening PostgreSQL, and the two mends its driver stack needs (docs/decisions/023-postgresql.md, 6). */

/** Connections of the pool for reads and the other writes; PostgreSQL's default max_connections (100) fits several instances. */
export const POSTGRESQL_POOL_SIZE = 10;
/**
 * Connections reserved for the ledger writers' transactions, and how many of the process's
 * writers hold a turn at once (lib/db/writer-turns.ts): one in the writers' lock, the next
 * with BEGIN sent and waiting at it. A writer never waits behind reads for a connection
 * (docs/decisions/091-postgresql-writers-queue-in-process.md).
 */
export const POSTGRESQL_WRITERS_POOL_SIZE = 2;

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
      const connected = mended(await factory.connect());
      onAdapter?.(connected);
      return connected;
    },
  };
  return new generated.PrismaClient({ adapter }) as unknown as PrismaClient;
}

/**
 * The ledger writers' own pool (POSTGRESQL_WRITERS_POOL_SIZE connections), mended alike;
 * `dispose()` closes it. Its connections pipeline: a statement is sent without waiting for the
 * answer to the one before, so statements a writer sends together share a round trip.
 */
export async function openPostgresqlWriters(url: string): Promise<SqlDriverAdapter> {
  const { PrismaPg } = await import("@prisma/adapter-pg");
  return mended(await new PrismaPg({ connectionString: url, max: POSTGRESQL_WRITERS_POOL_SIZE, pipeline: true }).connect());
}

function mended(connected: SqlDriverAdapter & { underlyingDriver(): pg.Pool }): SqlDriverAdapter {
  listenOnEveryConnection(connected.underlyingDriver());
  const startTransaction = connected.startTransaction.bind(connected);
  return Object.assign(connected, {
    startTransaction: async (isolationLevel?: IsolationLevel) => releaseOnFailedEnd(await startTransaction(isolationLevel)),
  });
}
