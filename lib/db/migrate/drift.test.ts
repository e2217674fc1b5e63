import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { createPostgresqlDatabase, testsRunOnPostgresql } from "@/testing/postgresql";
import { generatedHeader, historyNames, migrationDigest, migrationKey, migrationNames, migrationSql, MIGRATION_DIRS, POSTGRESQL_SCHEMA_DIR, readHistory, readMigrationDigests, readSchemaFiles, readSource, SOURCE_SCHEMA_DIR, wholeSchemaSql } from "./generate";
import { MIGRATIONS_DIR, POSTGRESQL_MIGRATIONS_DIR } from "./index";
import { migratePostgresql } from "./postgresql";
import { derivePostgresqlSchema, markerSql, modelMarkers } from "./schema-source";
import { migrateSqlite } from "./sqlite";

// The drift check of decision 023: the PostgreSQL schema, both migration folders
// and the history of snapshots must all follow prisma/schema/ (decision 071). Each failure
// says which command puts it right.

const source = readSource();
const scratch = mkdtempSync(path.join(tmpdir(), "baton-drift-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// The files' checks and the SQLite build read no test database: they run in the SQLite pass,
// and the PostgreSQL pass (which runs this file for "on PostgreSQL") does not repeat them.
const inSqlitePass = !testsRunOnPostgresql();

describe.runIf(inSqlitePass)("one schema source", () => {
  it("derives prisma/postgresql/schema/ from prisma/schema/, file by file (else run `npm run db:schemas`)", () => {
    expect(readSchemaFiles(POSTGRESQL_SCHEMA_DIR)).toEqual(derivePostgresqlSchema(readSchemaFiles(SOURCE_SCHEMA_DIR)));
  });

  it("has a migration for the current source (else run `npm run db:schemas -- --new <name>`)", () => {
    expect(readHistory(historyNames().at(-1)!)).toBe(source);
  });

  it("has the same migrations, one per snapshot, in both folders", () => {
    expect(migrationNames("sqlite")).toEqual(historyNames());
    expect(migrationNames("postgresql")).toEqual(historyNames());
  });

  it("has every migration as it was written (its digest in prisma/migrations.sha256)", () => {
    const digests = readMigrationDigests();
    for (const dialect of ["sqlite", "postgresql"] as const) {
      for (const name of migrationNames(dialect)) {
        const key = migrationKey(dialect, name);
        expect(digests.get(key), `${key} has no digest: run npm run db:schemas`).toBeDefined();
        expect(migrationDigest(dialect, name), `${key} changed after it was written: add a new migration instead`).toBe(digests.get(key));
      }
    }
  });

  it("has the newest migration exactly as the generator writes it now", () => {
    // The older ones were checked when they were newest, and their digests keep them so.
    const newest = historyNames().at(-1)!;
    for (const dialect of ["sqlite", "postgresql"] as const) {
      const file = path.join(MIGRATION_DIRS[dialect], newest, "migration.sql");
      const text = readFileSync(file, "utf8");
      expect(text.startsWith(generatedHeader(newest)), `${file} must be generated`).toBe(true);
      expect(text, `${file} differs from its snapshots: regenerate it (delete it, run npm run db:schemas)`).toBe(migrationSql(dialect, newest));
    }
  }, 60_000);

  it("reads the markers and refuses to drop one silently", () => {
    expect(modelMarkers(source)).toEqual({ appendOnly: ["HumanRevision", "LedgerEvent", "PacketVersion"], announced: ["LedgerEvent"] });
    const unmarked = source.replace("/// @append-only\n/// @announced\nmodel LedgerEvent", "model LedgerEvent");
    expect(() => markerSql("sqlite", source, unmarked)).toThrow(/hand-written migration/);
    expect(markerSql("sqlite", null, source)).toContain(`CREATE TRIGGER "LedgerEvent_no_delete"`);
    expect(markerSql("sqlite", null, source)).not.toContain("pg_notify");
    expect(markerSql("postgresql", null, source)).toContain(`CREATE TRIGGER "LedgerEvent_announce" AFTER INSERT ON "LedgerEvent"`);
  });
});

/** SQLite's catalog in a form two ways of building one schema agree on. */
function sqliteCatalog(file: string): unknown {
  const db = new Database(file, { readonly: true });
  try {
    const tables = db
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '_prisma_migrations' ORDER BY name`)
      .pluck()
      .all() as string[];
    return {
      tables: tables.map((table) => ({
        table,
        columns: db.prepare(`SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?) ORDER BY name`).all(table),
        indexes: (db.prepare(`SELECT name, "unique" FROM pragma_index_list(?) ORDER BY name`).all(table) as { name: string }[]).map((index) => ({
          ...index,
          columns: db.prepare(`SELECT name FROM pragma_index_info(?) ORDER BY seqno`).pluck().all(index.name),
        })),
        foreignKeys: db.prepare(`SELECT "table", "from", "to", on_update, on_delete FROM pragma_foreign_key_list(?) ORDER BY "from"`).all(table),
      })),
      triggers: db.prepare(`SELECT name, tbl_name FROM sqlite_master WHERE type = 'trigger' ORDER BY name`).all(),
    };
  } finally {
    db.close();
  }
}

describe("the migrations build the source's schema", () => {
  it.runIf(inSqlitePass)("on SQLite", () => {
    const migrated = path.join(scratch, "migrated.db");
    migrateSqlite(migrated, MIGRATIONS_DIR);
    const whole = path.join(scratch, "whole.db");
    const db = new Database(whole);
    db.exec(wholeSchemaSql("sqlite", source));
    db.close();
    expect(sqliteCatalog(migrated)).toEqual(sqliteCatalog(whole));
  }, 60_000);

  it.runIf(testsRunOnPostgresql())("on PostgreSQL", async () => {
    const migrated = await createPostgresqlDatabase();
    const whole = await createPostgresqlDatabase();
    try {
      // Two instances starting at once: each migration is applied once.
      const [first, second] = await Promise.all([
        migratePostgresql(migrated.url, POSTGRESQL_MIGRATIONS_DIR),
        migratePostgresql(migrated.url, POSTGRESQL_MIGRATIONS_DIR),
      ]);
      expect([...first, ...second].sort()).toEqual(historyNames());
      await withClient(whole.url, (client) => client.query(wholeSchemaSql("postgresql", source)));
      expect(await withClient(migrated.url, postgresqlCatalog)).toEqual(await withClient(whole.url, postgresqlCatalog));
    } finally {
      await migrated.drop();
      await whole.drop();
    }
  }, 120_000);
});

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function postgresqlCatalog(client: pg.Client): Promise<unknown> {
  const rows = async (sql: string) => (await client.query(sql)).rows;
  return {
    columns: await rows(`SELECT table_name, column_name, data_type, is_nullable, column_default, character_maximum_length, datetime_precision
      FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> '_prisma_migrations' ORDER BY table_name, column_name`),
    indexes: await rows(`SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename <> '_prisma_migrations' ORDER BY indexname`),
    constraints: await rows(`SELECT conrelid::regclass::text AS "table", conname, pg_get_constraintdef(oid) AS def
      FROM pg_constraint WHERE connamespace = 'public'::regnamespace AND conrelid::regclass::text <> '_prisma_migrations' ORDER BY conname`),
    triggers: await rows(`SELECT tgrelid::regclass::text AS "table", tgname, pg_get_triggerdef(oid) AS def FROM pg_trigger WHERE NOT tgisinternal ORDER BY tgname`),
    functions: await rows(`SELECT proname, prosrc FROM pg_proc WHERE pronamespace = 'public'::regnamespace ORDER BY proname`),
  };
}
