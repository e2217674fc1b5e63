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

const checkName = (name: string) => {
  if (!/^[a-z][a-z0-9_]*$/.test(name)) throw new Error(`a database name of lower-case letters, digits and _, got ${name}`);
};

const urlOf = (name: string) => {
  const url = new URL(TEST_POSTGRESQL_URL);
  url.pathname = `/${name}`;
  return url.toString();
};

/**
 * A new database on the test server (named, or with a random name): empty, or a copy of
 * `template` (see migratedTemplate); its URL and how to drop it.
 */
export async function createPostgresqlDatabase(
  name = `baton_test_${randomBytes(6).toString("hex")}`,
  template?: string,
): Promise<{ url: string; drop: () => Promise<void> }> {
  checkName(name);
  if (template) checkName(template);
  await onServer(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await withRetries(() => onServer(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ""}`));
  return { url: urlOf(name), drop: () => dropDatabase(name) };
}

// Any constant of our own: "battpl" in ASCII.
const TEMPLATE_LOCK = 0x626174_74706c;

/**
 * The name of a database on the test server that `migrate` has brought to `version` (a digest
 * of the migrations), made once for the server and copied by each test file's database
 * (CREATE DATABASE ... TEMPLATE): running every migration per test file was most of the
 * PostgreSQL server's work for a file that reads little (docs/decisions/085-notifier-reads-per-step.md).
 * It is built under another name and renamed when complete, under a lock, so test processes
 * starting together build it once and never copy a half-migrated one; no connection is allowed
 * to it afterwards (a copy needs none open). It stays on the server for later runs.
 */
export async function migratedTemplate(version: string, migrate: (url: string) => Promise<unknown>): Promise<string> {
  const name = `baton_template_${version}`;
  checkName(name);
  const client = new pg.Client({ connectionString: TEST_POSTGRESQL_URL });
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [TEMPLATE_LOCK]);
    const building = `${name}_building`;
    const existing = await client.query<{ name: string }>("SELECT datname AS name FROM pg_database WHERE datname = $1 OR datname = $2", [name, building]);
    if (existing.rows.some((row) => row.name === name)) return name;
    // Left by a build that did not finish. (Templates of other versions are left alone: another
    // checkout's suite may be copying its own on a shared server.)
    if (existing.rows.length) await dropDatabase(building);
    await client.query(`CREATE DATABASE "${building}"`);
    await migrate(urlOf(building));
    await client.query(`ALTER DATABASE "${building}" RENAME TO "${name}"`);
    await client.query(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS false`);
    return name;
  } finally {
    await client.end();
  }
}

/** PostgreSQL's "source database is being accessed by other users" (SQLSTATE object_in_use). */
const OBJECT_IN_USE = "55006";

/**
 * CREATE DATABASE from a template fails for a moment while another session (autovacuum) is on
 * the template: a few tries for that error alone; any other fails at once.
 */
async function withRetries(work: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt === 10 || (error as { code?: string }).code !== OBJECT_IN_USE) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
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
