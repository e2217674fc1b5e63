import { z } from "zod";
import { RISK_VIEWS } from "./dto";

/** The risks view's filters, shared by the API query string and the page URL. */
export const riskFiltersSchema = z.object({
  state: z.enum(RISK_VIEWS, { error: 'state accepts "open" (the default: resolved and snoozed risks hidden) or "all"' }).default("open"),
  /** Free text: a risk's detail, or a thread's key or agent. */
  q: z.string().trim().max(200, "q must be at most 200 characters").optional(),
});
export type RiskFilters = z.infer<typeof riskFiltersSchema>;
