import { randomBytes } from "node:crypto";
import pg from "pg";

/**
 * A PostgreSQL role that may CREATE DATABASE; the suite uses it only in the pass with
 * BATON_TEST_DATABASE=postgresql (docs/testing.md#testing-on-postgresql).
 */
export const TEST_POSTGRESQL_URL = process.env.BATON_TEST_POSTGRESQL_URL ?? "";

export function testsRunOnPostgresql(): boolean {
  return TEST_POSTGRESQL_URL !== "" && process.env.BATON_TEST_DATABASE === "postgresql";
}

async function onServer(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_POSTGRESQL_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A new, empty database on the test server (named, or with a random name); its URL and how to drop it. */
export async function createPostgresqlDatabase(name = `baton_test_${randomBytes(6).toString("hex")}`): Promise<{ url: string; drop: () => Promise<void> }> {
  if (!/^[a-z][a-z0-9_]*$/.test(name)) throw new Error(`a database name of lower-case letters, digits and _, got ${name}`);
  await onServer(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await onServer(`CREATE DATABASE "${name}"`);
  const url = new URL(TEST_POSTGRESQL_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => dropDatabase(name) };
}

/**
 * Drops a test database. WITH (FORCE) ends our own leftover connections, but fails when
 * an autovacuum worker (a superuser's process) is on the database after heavy writes;
 * a plain DROP cancels autovacuum itself. So: FORCE, then plain, a few times.
 */
async function dropDatabase(name: string): Promise<void> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 10; attempt++) {
    try {
      await onServer(`DROP DATABASE IF EXISTS "${name}"${attempt % 2 ? "" : " WITH (FORCE)"}`);
      return;
    } catch (error) {
      lastError = error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  throw lastError;
}

/**
 * A connection of its own to the test database (what another Baton process
 * would hold): statements take `$1, $2...` on both databases, Dates are
 * written as each database's adapter writes them, and nothing is announced in
 * this process.
 */
export interface OtherConnection {
  run(sql: string, params?: unknown[]): Promise<void>;
  /** The statements in one transaction. */
  transaction(statements: [string, unknown[]][]): Promise<void>;
  close(): Promise<void>;
}

export async function otherConnection(databaseUrl: string): Promise<OtherConnection> {
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    // Timestamps are stored zone-less in UTC (as Prisma writes them).
    await client.query("SET TIME ZONE 'UTC'");
    const run = async (sql: string, params: unknown[] = []) => {
      await client.query(sql, params);
    };
    return {
      run,
      async transaction(statements) {
        await client.query("BEGIN");
        try {
          for (const [sql, params] of statements) await run(sql, params);
          await client.query("COMMIT");
        } catch (error) {
          await client.query("ROLLBACK");
          throw error;
        }
      },
      close: () => client.end(),
    };
  }
  const { default: Database } = await import("better-sqlite3");
  const db = new Database(databaseUrl.replace(/^file:/, ""));
  // `$n` placeholders become `?` with the values in the order they appear.
  const run = (sql: string, params: unknown[]) => {
    const order = [...sql.matchAll(/\$(\d+)/g)].map((match) => Number(match[1]) - 1);
    const values = order.map((index) => params[index]).map((value) => (value instanceof Date ? value.toISOString().replace("Z", "+00:00") : value));
    db.prepare(sql.replace(/\$\d+/g, "?")).run(...values);
  };
  return {
    async run(sql, params = []) {
      run(sql, params);
    },
    async transaction(statements) {
      db.transaction(() => {
        for (const [sql, params] of statements) run(sql, params);
      })();
    },
    async close() {
      db.close();
    },
  };
}
