import "server-only";
import type { SqlExecutor } from "../db/client";
import { Prisma } from "../generated/prisma/client";
import { newId } from "../db/ids";
import { inChunks } from "../db/sql";

/** A thread as the batch sees it: read once, then changed in memory, written once. */
export interface ThreadState {
  id: string;
  key: string;
  isNew: boolean;
  changed: boolean;
  archived: boolean;
  activeVersionId: string | null;
  activeSortAt: Date | null;
  activeReceivedAt: Date | null;
  activeArrivalSeq: number | null;
  createdAt: Date;
  updatedAt: Date;
  agent: string | null;
  project: string | null;
  branch: string | null;
  topic: string | null;
}

const asDate = (value: string | Date | null) => (value === null ? null : value instanceof Date ? value : new Date(value));

export const THREAD_COLUMNS = [
  "id", "key", "archived", "activeVersionId", "activeSortAt", "activeReceivedAt", "activeArrivalSeq", "agent", "project", "branch", "topic",
  "createdAt", "updatedAt",
] as const;
export const THREAD_UPDATED_COLUMNS = THREAD_COLUMNS.filter((column) => column !== "id" && column !== "key" && column !== "createdAt");

type ThreadRowRead = {
  id: string | null;
  key: string;
  archived: boolean | number | bigint;
  activeVersionId: string | null;
  activeSortAt: string | Date | null;
  activeReceivedAt: string | Date | null;
  activeArrivalSeq: number | bigint | null;
  createdAt: string | Date;
  updatedAt: string | Date;
  agent: string | null;
  project: string | null;
  branch: string | null;
  topic: string | null;
  lastArrivalSeq: number | bigint | null;
};

/**
 * The batch's threads by key, as stored, and the last arrival sequence given, in one statement
 * (a row even when no thread is stored yet). Writers take turns (one SQLite writer; on PostgreSQL
 * every write transaction first takes one advisory lock), so the next sequence is that plus one,
 * in one process and across instances; the unique index refuses a duplicate anyway.
 */
export async function readThreads(sql: SqlExecutor, keys: string[]): Promise<{ threads: Map<string, ThreadState>; lastArrivalSeq: number }> {
  const columns = Prisma.raw(THREAD_COLUMNS.map((column) => `t."${column}"`).join(", "));
  const rows = keys.length
    ? await inChunks(keys, (chunk) =>
        sql.query<ThreadRowRead>(Prisma.sql`SELECT ${columns}, s."lastArrivalSeq"
          FROM (SELECT MAX("arrivalSeq") AS "lastArrivalSeq" FROM "PacketVersion") s
          LEFT JOIN "Thread" t ON t."key" IN (${Prisma.join(chunk)})`),
      )
    : await sql.query<Pick<ThreadRowRead, "lastArrivalSeq">>(Prisma.sql`SELECT MAX("arrivalSeq") AS "lastArrivalSeq" FROM "PacketVersion"`);
  const threads = new Map<string, ThreadState>();
  for (const row of rows as ThreadRowRead[]) {
    if (row.id === null || row.id === undefined) continue;
    threads.set(row.key, {
      id: row.id,
      key: row.key,
      isNew: false,
      changed: false,
      archived: Boolean(Number(row.archived)),
      activeSortAt: asDate(row.activeSortAt),
      activeReceivedAt: asDate(row.activeReceivedAt),
      activeVersionId: row.activeVersionId,
      activeArrivalSeq: row.activeArrivalSeq === null ? null : Number(row.activeArrivalSeq),
      createdAt: asDate(row.createdAt)!,
      updatedAt: asDate(row.updatedAt)!,
      agent: row.agent,
      project: row.project,
      branch: row.branch,
      topic: row.topic,
    });
  }
  return { threads, lastArrivalSeq: Number(rows[0]?.lastArrivalSeq ?? 0) };
}

/** The batch's thread for `key`: the stored one, or a new one (written with the batch). */
export function threadFor(threads: Map<string, ThreadState>, key: string, receivedAt: Date): ThreadState {
  let thread = threads.get(key);
  if (!thread) {
    thread = {
      id: newId("th", receivedAt.getTime()),
      key,
      isNew: true,
      changed: true,
      archived: false,
      activeVersionId: null,
      activeSortAt: null,
      activeReceivedAt: null,
      activeArrivalSeq: null,
      createdAt: receivedAt,
      updatedAt: receivedAt,
      agent: null,
      project: null,
      branch: null,
      topic: null,
    };
    threads.set(key, thread);
  }
  return thread;
}

/** A thread's row; a new thread is first written without its active version (which refers to it). */
export function threadRow(thread: ThreadState, withActive: boolean): unknown[] {
  return [
    thread.id, thread.key, thread.archived, withActive ? thread.activeVersionId : null,
    withActive ? thread.activeSortAt : null, withActive ? thread.activeReceivedAt : null, withActive ? thread.activeArrivalSeq : null,
    thread.agent, thread.project, thread.branch, thread.topic, thread.createdAt, thread.updatedAt,
  ];
}
