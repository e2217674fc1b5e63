import "server-only";
import { randomUUID } from "node:crypto";
import pg from "pg";
import { migrationFolderNames, readMigration } from "./migration-folders";

/**
 * Applies pending migrations from prisma/postgresql/migrations, recording them
 * in Prisma's `_prisma_migrations` table as `prisma migrate deploy` would
 * (which cannot run here: its WebAssembly engine fails on PostgreSQL, see
 * docs/platform.md#prisma). Each migration runs in one transaction; a session-level
 * advisory lock makes instances that start together apply each migration once.
 */

// Any constant of our own: "baton" in ASCII.
const MIGRATION_LOCK = 0x626174_6f6e;

export async function migratePostgresql(connectionString: string, migrationsDir: string): Promise<string[]> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
      "id" VARCHAR(36) PRIMARY KEY NOT NULL,
      "checksum" VARCHAR(64) NOT NULL,
      "finished_at" TIMESTAMPTZ,
      "migration_name" VARCHAR(255) NOT NULL,
      "logs" TEXT,
      "rolled_back_at" TIMESTAMPTZ,
      "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
      "applied_steps_count" INTEGER NOT NULL DEFAULT 0
    )`);
    const applied: string[] = [];
    for (const name of migrationFolderNames(migrationsDir)) {
      const done = await client.query(
        `SELECT 1 FROM "_prisma_migrations" WHERE migration_name = $1 AND finished_at IS NOT NULL AND rolled_back_at IS NULL`,
        [name],
      );
      if (done.rowCount) continue;
      const { sql, checksum } = readMigration(migrationsDir, name);
      await client.query("BEGIN");
      try {
        await client.query(sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, started_at, applied_steps_count) VALUES ($1, $2, now(), $3, now(), 1)`,
          [randomUUID(), checksum, name],
        );
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK");
        throw new Error(`migration ${name} failed: ${(error as Error).message}`, { cause: error });
      }
      applied.push(name);
    }
    return applied;
  } finally {
    await client.end();
  }
}
