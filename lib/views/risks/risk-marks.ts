import "server-only";
import type { SqlExecutor } from "../../db/client";
import { insertRows } from "../../db/sql";
import { newId } from "../../db/ids";

/**
 * The writers' side of the stored risk groups (docs/decisions/084-risk-groups-refreshed-after-commit.md):
 * ingest, archiving and triage mark what changed, in their own transaction; ./read-model.ts rewrites it after commit.
 */

/**
 * A writer's mark, in its transaction: these threads' active packet, history or archiving
 * changed. One statement; the refresher rewrites their pairs and groups after commit.
 */
export async function markRiskThreads(sql: SqlExecutor, threadIds: readonly string[]): Promise<void> {
  const unique = [...new Set(threadIds)];
  if (unique.length) await insertRows(sql, "RiskThreadMark", ["id", "threadId"], markIds("rtm", unique));
}

/** Rows of marks: one time-sortable id (lib/db/ids.ts) per call, numbered within it (a big packet's thousands of marks share its randomness). */
function markIds(prefix: string, values: readonly string[]): unknown[][] {
  const id = newId(prefix);
  return values.map((value, n) => [`${id}-${n}`, value]);
}

/** A writer's mark, in its transaction: these fingerprints' triage changed. One statement. */
export async function markRiskGroups(sql: SqlExecutor, fingerprints: readonly string[]): Promise<void> {
  const unique = [...new Set(fingerprints)];
  if (unique.length) await insertRows(sql, "RiskGroupMark", ["id", "fingerprint"], markIds("rgm", unique));
}
