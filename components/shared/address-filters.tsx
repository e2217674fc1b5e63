import type { z } from "zod";

/** A page's search parameters as Next gives them. */
export type SearchParams = Record<string, string | string[] | undefined>;

/**
 * A view's filters from the page's address: the parameters given once (a repeated one is
 * left out) as `raw`, and `parsed` by the view's schema; a page shows what it could not
 * read with <IgnoredFilters> and goes on without those filters.
 */
export function filtersFromAddress<Schema extends z.ZodType>(params: SearchParams, schema: Schema) {
  const raw = Object.fromEntries(Object.entries(params).flatMap(([key, value]) => (typeof value === "string" ? [[key, value]] : [])));
  return { raw, parsed: schema.safeParse(raw) };
}

/** Says which filters of the address were not understood (and so are ignored), or nothing. */
export function IgnoredFilters({ parsed }: { parsed: z.ZodSafeParseResult<unknown> }) {
  if (parsed.success) return null;
  return (
    <p role="alert" className="text-sm text-danger">
      Some filters in the address were not understood and are ignored: {parsed.error.issues.map((issue) => issue.message).join("; ")}
    </p>
  );
}
