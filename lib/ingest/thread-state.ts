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

/** The batch's threads by key, as stored. */
export async function readThreads(sql: SqlExecutor, keys: string[]): Promise<Map<string, ThreadState>> {
  if (!keys.length) return new Map();
  const rows = await inChunks(keys, (chunk) => sql.query<
    {
      id: string;
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
    }
  >(Prisma.sql`SELECT ${Prisma.raw(THREAD_COLUMNS.map((column) => `"${column}"`).join(", "))} FROM "Thread" WHERE "key" IN (${Prisma.join(chunk)})`));
  return new Map(
    rows.map((row) => [
      row.key,
      {
        ...row,
        isNew: false,
        changed: false,
        archived: Boolean(Number(row.archived)),
        activeSortAt: asDate(row.activeSortAt),
        activeReceivedAt: asDate(row.activeReceivedAt),
        activeArrivalSeq: row.activeArrivalSeq === null ? null : Number(row.activeArrivalSeq),
        createdAt: asDate(row.createdAt)!,
        updatedAt: asDate(row.updatedAt)!,
      },
    ]),
  );
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
