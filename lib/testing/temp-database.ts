import { afterAll, beforeAll } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { resetConfig } from "../config";
import { closeDatabase } from "../db";
import { migrateDatabase } from "../migrate/index";

/**
 * A fresh, migrated SQLite file for one test file: sets DATABASE_URL, and
 * removes the folder when disposed. Tests own their data.
 */
export async function useTempDatabase(): Promise<{ dir: string; url: string; dispose: () => Promise<void> }> {
  await closeDatabase();
  const dir = mkdtempSync(path.join(tmpdir(), "baton-test-"));
  const url = `file:${path.join(dir, "baton.db")}`;
  process.env.DATABASE_URL = url;
  resetConfig();
  migrateDatabase(url);
  return {
    dir,
    url,
    async dispose() {
      await closeDatabase();
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
