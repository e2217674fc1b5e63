/** A code host's timestamp as ISO, or null: ISO 8601, or GitLab's "2026-12-01 10:00:00 UTC". */
export function hostTime(value: string | null | undefined): string | null {
  if (!value) return null;
  const iso = value.trim().replace(/^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}) UTC$/, "$1T$2Z").replace(/^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}) ([+-]\d{4})$/, "$1T$2$3");
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

/** The first of `values` that reads as a time. */
export function firstHostTime(...values: (string | null | undefined)[]): string | null {
  for (const value of values) {
    const time = hostTime(value);
    if (time) return time;
  }
  return null;
}
