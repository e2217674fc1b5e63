import "server-only";
import type { z } from "zod";
import { database, type Tx } from "../db/client";
import { inChunks } from "../db/sql";
import type { ThreadWorkDto } from "./dto";
import { storedCiSchema, storedPullRequestSchema, storedReviewSchema, toThreadWork, type StoredWork } from "./work-state";

/** ThreadWork rows: a thread's pull request, CI and review state, read for cards and handoffs. */

const NOTHING: StoredWork = { pullRequest: null, ci: null, review: null };

function parsed<S extends z.ZodType>(schema: S, json: string | null): z.output<S> | null {
  if (json === null) return null;
  const result = schema.safeParse(JSON.parse(json));
  return result.success ? result.data : null;
}

type Row = { pullRequest: string | null; ci: string | null; review: string | null };
function toStored(row: Row | null): StoredWork {
  if (!row) return NOTHING;
  return { pullRequest: parsed(storedPullRequestSchema, row.pullRequest), ci: parsed(storedCiSchema, row.ci), review: parsed(storedReviewSchema, row.review) };
}

export async function loadStoredWork(tx: Tx, threadKey: string): Promise<StoredWork> {
  return toStored(await tx.threadWork.findUnique({ where: { threadKey } }));
}

export async function saveStoredWork(tx: Tx, threadKey: string, work: StoredWork, at: Date): Promise<void> {
  const data = {
    pullRequest: work.pullRequest ? JSON.stringify(work.pullRequest) : null,
    ci: work.ci ? JSON.stringify(work.ci) : null,
    review: work.review ? JSON.stringify(work.review) : null,
    updatedAt: at,
  };
  await tx.threadWork.upsert({ where: { threadKey }, create: { threadKey, ...data }, update: data });
}

/** The work shown on each of these threads' cards (threads without any are left out). */
export async function loadThreadWork(threadKeys: readonly string[]): Promise<Map<string, ThreadWorkDto>> {
  const db = await database();
  const rows = await inChunks(threadKeys, (keys) => db.threadWork.findMany({ where: { threadKey: { in: keys } } }));
  const work = new Map<string, ThreadWorkDto>();
  for (const row of rows) {
    const shown = threadWorkOf(row);
    if (shown) work.set(row.threadKey, shown);
  }
  return work;
}

/** What a card shows of a thread's ThreadWork row (its columns read with the card: lib/board/card-rows.ts); null for none. */
export function threadWorkOf(row: Row): ThreadWorkDto | null {
  if (row.pullRequest === null && row.ci === null && row.review === null) return null;
  return toThreadWork(toStored(row));
}

/**
 * What the next session reads of the code host in its merged handoff (`ci`, `review`): the failing
 * check or the review's words, so it starts from the failure. Empty when nothing was reported.
 */
export async function handoffWork(threadKey: string): Promise<{ ci?: NonNullable<ThreadWorkDto["ci"]>; review?: NonNullable<ThreadWorkDto["review"]> }> {
  const work = (await loadThreadWork([threadKey])).get(threadKey);
  return { ...(work?.ci ? { ci: work.ci } : {}), ...(work?.review ? { review: work.review } : {}) };
}
