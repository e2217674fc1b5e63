/** "5 min", "3 h", "2 d": how long ago, in the fewest words. */
export function formatAge(ms: number): string {
  const minutes = Math.max(0, Math.floor(ms / 60_000));
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h`;
  return `${Math.floor(hours / 24)} d`;
}

/** "just now", "5 min ago", "in 3 h": a moment seen from `now` (ms). */
export function formatRelative(iso: string, now: number): string {
  const ms = now - Date.parse(iso);
  if (Math.abs(ms) < 60_000) return "just now";
  return ms > 0 ? `${formatAge(ms)} ago` : `in ${formatAge(-ms)}`;
}

/** Two moments of one packet (the agent's and Baton's) are told apart only past this. */
export const DISTINCT_TIMES_MS = 60_000;
