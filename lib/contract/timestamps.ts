/** Producer timestamps: ISO-8601 strings, or epoch seconds as a number or numeric string. */

export function parseProducerTimestamp(value: string | number): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? Math.round(value * 1000) : null;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // An ISO date-time without an offset is read as UTC, not as the server's local time.
  const withZone = /T|\s\d/.test(text) && !/(Z|[+-]\d{2}:?\d{2})$/i.test(text) ? `${text}Z` : text;
  const ms = Date.parse(withZone.replace(" ", "T"));
  return Number.isNaN(ms) ? null : ms;
}

/** The year-10000 ceiling keeps toISOString() valid for absurd epoch values. */
export const MAX_TIMESTAMP_MS = Date.UTC(9999, 11, 31, 23, 59, 59);
