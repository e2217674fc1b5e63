import { CLOCK_SKEW_MS } from "../packet/lint";

/**
 * Ordering within a thread: the producer's created_at when present and sane
 * (not more than 24 h in the future), else Baton's received_at. Ties go to the
 * later arrival, then to the larger (time-sortable) id.
 */
export interface OrderKey {
  sortAt: Date;
  receivedAt: Date;
  id: string;
}

export function sortTimeFor(createdAtMs: number | null, receivedAt: Date): Date {
  if (createdAtMs !== null && createdAtMs <= receivedAt.getTime() + CLOCK_SKEW_MS) return new Date(createdAtMs);
  return receivedAt;
}

export function isNewer(candidate: OrderKey, current: OrderKey): boolean {
  const bySort = candidate.sortAt.getTime() - current.sortAt.getTime();
  if (bySort !== 0) return bySort > 0;
  const byArrival = candidate.receivedAt.getTime() - current.receivedAt.getTime();
  if (byArrival !== 0) return byArrival > 0;
  return candidate.id > current.id;
}
