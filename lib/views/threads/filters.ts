import { z } from "zod";
import { FLAG_CODES } from "../../contract/lint";
import { SEVERITIES } from "../../contract/severity";

const commaList = <const V extends readonly [string, ...string[]]>(name: string, values: V) =>
  z
    .string()
    .optional()
    .transform((value) => (value ? value.split(",").map((part) => part.trim()).filter(Boolean) : []))
    .pipe(z.array(z.enum(values, { error: () => `${name} accepts ${values.join(", ")} (comma-separated)` })));

/** Board filters, shared by the API query string and the page URL. */
export const threadFiltersSchema = z.object({
  q: z.string().trim().max(200).optional(),
  agent: z.string().trim().max(200).optional(),
  project: z.string().trim().max(200).optional(),
  branch: z.string().trim().max(200).optional(),
  severity: commaList("severity", SEVERITIES),
  flag: commaList("flag", FLAG_CODES),
});
export type ThreadFilters = z.infer<typeof threadFiltersSchema>;

export const THREAD_PAGE_DEFAULT = 50;
export const THREAD_PAGE_MAX = 500;

export const threadListQuerySchema = threadFiltersSchema.extend({
  cursor: z.string().max(200).optional(),
  limit: z.coerce.number().int().min(1).max(THREAD_PAGE_MAX).default(THREAD_PAGE_DEFAULT),
});
export type ThreadListQuery = z.infer<typeof threadListQuerySchema>;
