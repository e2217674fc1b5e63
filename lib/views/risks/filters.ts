import { z } from "zod";
import { RISK_ORDERS, RISK_SORTS, RISK_VIEWS } from "./dto";

/** The risks view's filters, shared by the API query string and the page URL. */
export const riskFiltersSchema = z.object({
  state: z.enum(RISK_VIEWS, { error: 'state accepts "open" (the default: resolved and snoozed risks hidden) or "all"' }).default("open"),
  /** Free text: a risk's detail, or a thread's key or agent. */
  q: z.string().trim().max(200, "q must be at most 200 characters").optional(),
  sort: z.enum(RISK_SORTS, { error: `sort accepts ${RISK_SORTS.map((sort) => `"${sort}"`).join(", ")} (the default: attention)` }).default("attention"),
  /** Without it, the column's own first direction (RISK_SORT_FIRST_ORDER). */
  order: z.enum(RISK_ORDERS, { error: 'order accepts "asc" or "desc"' }).optional(),
});
export type RiskFilters = z.infer<typeof riskFiltersSchema>;

/**
 * A page holds whole groups, up to `limit` thread risks (rows) and RISK_PAGE_MAX_BYTES of
 * JSON in all, whichever comes first; a single group larger than that comes alone.
 */
export const RISK_PAGE_DEFAULT = 100;
export const RISK_PAGE_MAX = 500;
export const RISK_PAGE_MAX_BYTES = 256 * 1024;

/** GET /api/v1/risks: the filters, and the page (`cursor` from the previous answer's `next_cursor`). */
export const riskListQuerySchema = riskFiltersSchema.extend({
  cursor: z.string().max(1000, "cursor is not one this API returned; start again without it").optional(),
  limit: z.coerce
    .number({ error: `limit must be a number of risks, 1 to ${RISK_PAGE_MAX}` })
    .int(`limit must be a whole number, 1 to ${RISK_PAGE_MAX}`)
    .min(1, `limit must be at least 1`)
    .max(RISK_PAGE_MAX, `limit must be at most ${RISK_PAGE_MAX}`)
    .default(RISK_PAGE_DEFAULT),
});
export type RiskListQuery = z.infer<typeof riskListQuerySchema>;
