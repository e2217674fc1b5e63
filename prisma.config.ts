import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "prisma/config";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";

// The CLI still looks for a native query engine library it never uses with the
// WebAssembly engines; point it at any existing file (docs/platform.md#prisma).
process.env.PRISMA_QUERY_ENGINE_LIBRARY ??= fileURLToPath(import.meta.url);
process.env.DATABASE_URL ??= "file:./data/baton.db";

export default defineConfig({
  // A folder: one file per part of the system (docs/decisions/071-schema-folder.md).
  schema: path.join("prisma", "schema"),
  // Named, or `prisma migrate status` finds no migration once the schema is a folder.
  migrations: { path: path.join("prisma", "migrations") },
  experimental: { adapter: true },
  engine: "js",
  adapter: async () => new PrismaBetterSQLite3({ url: process.env.DATABASE_URL! }),
});
