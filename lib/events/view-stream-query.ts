import { z } from "zod";
import { BatonError } from "../core/errors";

/**
 * A view's parameter of GET /api/v1/stream (`?board=`, `?risks=`, `?timeline=`): the view's
 * filters as its page URL has them, as one query string; empty for none.
 */
export function viewStreamQuerySchema<Param extends string>(param: Param, holds: string) {
  const value = z.string().max(2_000, `${param} accepts at most 2,000 characters (${holds})`).optional();
  return z.object({ [param]: value } as { [P in Param]: typeof value });
}

/** The view's query named by its stream parameter, read by the view's own schema; null when the stream does not ask for that view's deltas; 400 for bad filters. */
export function viewStreamQuery<Query>(param: string, value: string | undefined, schema: z.ZodType<Query>): Query | null {
  if (value === undefined) return null;
  const parsed = schema.safeParse(Object.fromEntries(new URLSearchParams(value)));
  if (parsed.success) return parsed.data;
  const fields = parsed.error.issues.map((issue) => ({ field: `${param}.${issue.path.join(".")}`, problem: issue.message }));
  throw new BatonError("invalid_request", `Bad ${param}: ${fields.map((f) => `${f.field} ${f.problem}`).join("; ")}.`, { fields });
}
