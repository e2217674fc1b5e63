import "server-only";
import { fileURLToPath } from "node:url";
import { config, isPostgresqlUrl, sqliteFilePath } from "../../server/config";
import { migratePostgresql } from "./postgresql";
import { migrateSqlite } from "./sqlite";

export const MIGRATIONS_DIR = fileURLToPath(new URL("../../../prisma/migrations", import.meta.url));
export const POSTGRESQL_MIGRATIONS_DIR = fileURLToPath(new URL("../../../prisma/postgresql/migrations", import.meta.url));

/** Applies pending migrations to the configured database (SQLite or PostgreSQL); returns their names. */
export async function migrateDatabase(databaseUrl = config().DATABASE_URL): Promise<string[]> {
  if (isPostgresqlUrl(databaseUrl)) return migratePostgresql(databaseUrl, POSTGRESQL_MIGRATIONS_DIR);
  return migrateSqlite(sqliteFilePath(databaseUrl), MIGRATIONS_DIR);
}
