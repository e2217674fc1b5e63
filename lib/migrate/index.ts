import { fileURLToPath } from "node:url";
import { config, sqliteFilePath } from "../config";
import { migrateSqlite } from "./sqlite";

export const MIGRATIONS_DIR = fileURLToPath(new URL("../../prisma/migrations", import.meta.url));

/** Applies pending migrations to the configured database; returns their names. */
export function migrateDatabase(databaseUrl = config().DATABASE_URL): string[] {
  if (databaseUrl.startsWith("file:")) return migrateSqlite(sqliteFilePath(databaseUrl), MIGRATIONS_DIR);
  throw new Error("Only SQLite (DATABASE_URL=file:...) is supported so far.");
}
