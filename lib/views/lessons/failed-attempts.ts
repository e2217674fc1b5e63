import "server-only";
import { newId } from "../../db/ids";
import type { CanonicalPacket } from "../../contract/canonical";
import { failureFingerprint } from "./fingerprint";

/** The FailedAttempt columns, in the order of the rows below (lib/db/sql.ts insertRows). */
export const FAILED_ATTEMPT_COLUMNS = ["id", "versionId", "threadId", "fingerprint", "attempt", "reason", "exitCode", "seenAt"] as const;

/**
 * One FailedAttempt row per failed attempt of a stored version, fingerprinted:
 * written by ingest in the version's transaction, and by the backfill for
 * versions stored before the lessons view existed. `seenAt` is when the version arrived.
 */
export function failedAttemptRows(
  attempts: CanonicalPacket["failed_attempts"],
  version: { versionId: string; threadId: string; receivedAt: Date },
): unknown[][] {
  if (!attempts?.length) return [];
  const at = version.receivedAt.getTime();
  return attempts.map((attempt) => [
    newId("fa", at),
    version.versionId,
    version.threadId,
    failureFingerprint(attempt.attempt, attempt.reason),
    attempt.attempt,
    attempt.reason ?? null,
    attempt.exit_code ?? null,
    version.receivedAt,
  ]);
}
