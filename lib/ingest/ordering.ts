import { CLOCK_SKEW_MS } from "../contract/lint";

/**
 * Ordering within a thread: the producer's created_at when present and sane
 * (not more than 24 h in the future), else Baton's received_at. A tie goes to
 * the later arrival: received_at, then within one millisecond the arrival
 * sequence (commit order, the same across instances); the larger id only for
 * versions stored before sequences existed. Decision 024.
 */
export interface OrderKey {
  sortAt: Date;
  receivedAt: Date;
  /** Null for versions stored before arrival sequences existed. */
  arrivalSeq: number | null;
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
  if (candidate.arrivalSeq !== null && current.arrivalSeq !== null) return candidate.arrivalSeq > current.arrivalSeq;
  return candidate.id > current.id;
}
