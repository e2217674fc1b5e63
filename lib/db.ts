import { mkdirSync } from "node:fs";
import path from "node:path";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaClient } from "./generated/prisma/client";
import { config, sqliteFilePath } from "./config";
import { BatonError } from "./errors";

export type Db = PrismaClient;
/** The client inside `db.$transaction(async (tx) => ...)`. */
export type Tx = Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0];

interface DbHolder {
  url: string;
  client: Promise<PrismaClient>;
}

// One client per process, kept on globalThis so that dev hot reloads reuse it.
const holder = globalThis as unknown as { __batonDb?: DbHolder };

async function openSqlite(url: string): Promise<PrismaClient> {
  const file = sqliteFilePath(url);
  mkdirSync(path.dirname(file), { recursive: true });
  const adapter = new PrismaBetterSQLite3({ url: `file:${file}`, timeout: config().BATON_SQLITE_BUSY_TIMEOUT_MS });
  const client = new PrismaClient({ adapter });
  // Per-connection settings: the adapter keeps one connection for the process.
  await client.$queryRawUnsafe("PRAGMA journal_mode = WAL");
  await client.$executeRawUnsafe("PRAGMA synchronous = FULL");
  await client.$executeRawUnsafe("PRAGMA foreign_keys = ON");
  return client;
}

/** The only Prisma client. */
export function database(): Promise<PrismaClient> {
  const url = config().DATABASE_URL;
  if (holder.__batonDb?.url !== url) {
    if (!url.startsWith("file:")) {
      throw new BatonError("unavailable", "PostgreSQL support is not built yet; use a file: DATABASE_URL.");
    }
    holder.__batonDb = { url, client: openSqlite(url) };
  }
  return holder.__batonDb.client;
}

export async function closeDatabase(): Promise<void> {
  const current = holder.__batonDb;
  holder.__batonDb = undefined;
  if (current) await (await current.client).$disconnect();
}

const BUSY_CODES = new Set(["SQLITE_BUSY", "SQLITE_BUSY_SNAPSHOT", "SQLITE_LOCKED"]);

/** True for a database that is busy right now (another writer), worth a retry. */
export function isBusyError(error: unknown): boolean {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current && typeof current === "object" && !seen.has(current)) {
    seen.add(current);
    const record = current as Record<string, unknown>;
    if (typeof record.code === "string" && BUSY_CODES.has(record.code)) return true;
    if (record.kind === "SocketTimeout") return true;
    if (typeof record.originalCode === "string" && BUSY_CODES.has(record.originalCode)) return true;
    if (typeof record.message === "string" && /SQLITE_BUSY|database is locked|SocketTimeout/.test(record.message)) return true;
    current = record.cause ?? record.meta;
  }
  return false;
}

/**
 * Runs `work` in one transaction, retrying a few times when another process
 * holds the write lock; past that, a 503 the client may retry.
 */
export async function inTransaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
  const db = await database();
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.$transaction(work, { maxWait: 10_000, timeout: 20_000 });
    } catch (error) {
      if (!isBusyError(error)) throw error;
      if (attempt >= 4) {
        throw new BatonError("unavailable", "The database is busy; retry shortly.", null, 1);
      }
      await new Promise((resolve) => setTimeout(resolve, 25 * attempt * attempt));
    }
  }
}
