import pg from "pg";
import { printableDatabaseUrl } from "../../lib/server/config";

/**
 * The benchmarks on PostgreSQL. Given a postgresql:// DATABASE_URL, a benchmark
 * never writes to the database that URL names: it creates a database of its own on
 * that server (baton_bench_<run id>), and drops it at the end, so every run starts
 * empty, as on SQLite (a fresh file), and nobody's data is ever wiped. The database
 * in the URL is only where it connects to create and drop (e.g. `postgres`). The
 * role needs CREATEDB. A run killed with SIGKILL leaves its baton_bench_* database
 * behind: drop it by hand.
 */

const NAME = /^baton_bench_[a-z0-9_]+$/;

/** The URL of database `name` on the server of `serverUrl` (same role, host, options). */
export function urlOfDatabase(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** The database a URL names. */
export function databaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.replace(/^\//, "")) || "(the role's default)";
}

/** One statement on its own connection to `url`; the rows. */
export async function query<Row extends object>(url: string, sql: string, params: unknown[] = []): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url, application_name: "baton-bench" });
  await client.connect();
  try {
    return (await client.query<Row>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

export interface OwnDatabase {
  name: string;
  url: string;
  /** Drops it (FORCE: connections left over are closed); safe to call twice. */
  drop(): Promise<void>;
}

function ownDatabase(serverUrl: string, name: string): OwnDatabase {
  let dropped = false;
  return {
    name,
    url: urlOfDatabase(serverUrl, name),
    async drop() {
      if (dropped) return;
      await query(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      dropped = true;
    },
  };
}

/**
 * A new, empty database `name` (baton_bench_...) on the server of `serverUrl`,
 * or a copy of `template` (which nothing may be connected to meanwhile).
 */
export async function createOwnDatabase(serverUrl: string, name: string, template?: string): Promise<OwnDatabase> {
  for (const given of [name, template]) {
    if (given !== undefined && !NAME.test(given)) throw new Error(`a benchmark database is named baton_bench_<letters, digits, _>, got ${given}`);
  }
  try {
    await query(serverUrl, `CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ""}`);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(
      `could not create the benchmark's database ${name} on ${printableDatabaseUrl(serverUrl)} (the role needs CREATEDB): ${message}`,
    );
  }
  return ownDatabase(serverUrl, name);
}

/** Server processes serving connections to database `name` (not this query's own). */
export async function backendPids(serverUrl: string, name: string): Promise<number[]> {
  const rows = await query<{ pid: number }>(
    serverUrl,
    "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
    [name],
  );
  return rows.map((row) => row.pid);
}
