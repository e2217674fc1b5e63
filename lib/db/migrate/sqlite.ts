import "server-only";
import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { migrationFolderNames, readMigration } from "./migration-folders";

/**
 * Applies pending migrations from prisma/migrations to a SQLite file, recording
 * them in Prisma's own `_prisma_migrations` table so that `prisma migrate status`
 * agrees. Each migration runs in one IMMEDIATE transaction, so two processes
 * starting at once apply it once.
 */
export function migrateSqlite(filePath: string, migrationsDir: string): string[] {
  mkdirSync(path.dirname(filePath), { recursive: true });
  const db = new Database(filePath, { timeout: 15_000 });
  try {
    db.pragma("journal_mode = WAL");
    db.exec(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
      "id" TEXT PRIMARY KEY NOT NULL,
      "checksum" TEXT NOT NULL,
      "finished_at" DATETIME,
      "migration_name" TEXT NOT NULL,
      "logs" TEXT,
      "rolled_back_at" DATETIME,
      "started_at" DATETIME NOT NULL DEFAULT current_timestamp,
      "applied_steps_count" INTEGER UNSIGNED NOT NULL DEFAULT 0
    )`);
    const applied: string[] = [];
    for (const name of migrationFolderNames(migrationsDir)) {
      const { sql, checksum } = readMigration(migrationsDir, name);
      const apply = db.transaction(() => {
        const done = db
          .prepare(`SELECT 1 FROM "_prisma_migrations" WHERE migration_name = ? AND finished_at IS NOT NULL AND rolled_back_at IS NULL`)
          .get(name);
        if (done) return false;
        db.exec(sql);
        const now = new Date().toISOString();
        db.prepare(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, started_at, applied_steps_count) VALUES (?, ?, ?, ?, ?, 1)`,
        ).run(randomUUID(), checksum, now, name, now);
        return true;
      });
      if (apply.immediate()) applied.push(name);
    }
    return applied;
  } finally {
    db.close();
  }
}
