import { z } from "zod";

/**
 * A moment as a DTO carries it: an ISO 8601 string in UTC, as `Date.toISOString()` writes it
 * (so times sort as text). The one shape of every time field the API sends; read as a string,
 * not re-checked as a date.
 */
export const isoTime = z.string();
