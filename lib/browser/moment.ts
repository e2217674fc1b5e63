/** Dates as people read them, in UTC and said so: server and browser render the same text. */
export const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"] as const;
export const pad2 = (value: number) => String(value).padStart(2, "0");

/** "Nov 29 09:12 UTC". */
export function formatMoment(iso: string): string {
  const date = new Date(iso);
  return `${MONTHS[date.getUTCMonth()]} ${date.getUTCDate()} ${pad2(date.getUTCHours())}:${pad2(date.getUTCMinutes())} UTC`;
}
