import { afterAll, beforeAll } from "vitest";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { resetConfig } from "../lib/server/config";
import { closeDatabase } from "../lib/db/client";
import { migrateDatabase, POSTGRESQL_MIGRATIONS_DIR } from "../lib/db/migrate/index";
import { migrationFolderNames, readMigration } from "../lib/db/migrate/migration-folders";
import { writeBacksSettled } from "../lib/human/writeback/write-human-section";
import { createPostgresqlDatabase, migratedTemplate, testsRunOnPostgresql } from "@/testing/postgresql";

let template: Promise<string> | undefined;
/** The test server's migrated template for these migrations (named by their digest), made once per process at most. */
function postgresqlTemplate(): Promise<string> {
  template ??= (() => {
    const digest = createHash("sha256");
    for (const name of migrationFolderNames(POSTGRESQL_MIGRATIONS_DIR)) digest.update(`${name}\0${readMigration(POSTGRESQL_MIGRATIONS_DIR, name).checksum}\0`);
    return migratedTemplate(digest.digest("hex").slice(0, 16), migrateDatabase);
  })();
  return template;
}

/**
 * A fresh, migrated database for one test file: a SQLite file in a temporary
 * folder, or in the PostgreSQL pass (testing/postgresql.ts) a PostgreSQL database of its own.
 * Sets DATABASE_URL; removes both when disposed. Tests own their data; `dir`
 * is a scratch folder either way.
 */
export async function useTempDatabase(): Promise<{ dir: string; url: string; dispose: () => Promise<void> }> {
  await closeDatabase();
  const dir = mkdtempSync(path.join(tmpdir(), "baton-test-"));
  // On PostgreSQL a copy of the migrated template; migrateDatabase below then finds nothing to apply.
  const postgresql = testsRunOnPostgresql() ? await createPostgresqlDatabase(undefined, await postgresqlTemplate()) : null;
  const url = postgresql?.url ?? `file:${path.join(dir, "baton.db")}`;
  process.env.DATABASE_URL = url;
  resetConfig();
  await migrateDatabase(url);
  return {
    dir,
    url,
    async dispose() {
      // A write-back that a test's action scheduled ends on this database, not on the next file's.
      await writeBacksSettled();
      await closeDatabase();
      await postgresql?.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * For a test file: a fresh database before its tests, removed after them.
 * Returns a getter, since the folder exists only once beforeAll has run.
 */
export function freshDatabaseForThisFile(): () => Awaited<ReturnType<typeof useTempDatabase>> {
  let temp: Awaited<ReturnType<typeof useTempDatabase>> | undefined;
  beforeAll(async () => {
    temp = await useTempDatabase();
  });
  afterAll(async () => {
    await temp?.dispose();
  });
  return () => {
    if (!temp) throw new Error("the temporary database is created in beforeAll");
    return temp;
  };
}
