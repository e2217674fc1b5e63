import "server-only";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/**
 * Prisma's migration folders as both databases' migrators (./sqlite.ts,
 * ./postgresql.ts) and the generator (./generate.ts) read them: one folder per
 * migration, named so that sorting them puts them in the order they apply.
 */

/** The migration folders' names in `migrationsDir`, oldest first. */
export function migrationFolderNames(migrationsDir: string): string[] {
  return readdirSync(migrationsDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

/** One migration's SQL and the checksum Prisma records for it in `_prisma_migrations`. */
export function readMigration(migrationsDir: string, name: string): { sql: string; checksum: string } {
  const sql = readFileSync(path.join(migrationsDir, name, "migration.sql"), "utf8");
  return { sql, checksum: createHash("sha256").update(sql).digest("hex") };
}
