import type { z } from "zod";
import { BatonError } from "../errors";

/** Parses a request's query string with a zod schema; errors name each parameter. */
export function parseQuery<T extends z.ZodType>(request: Request, schema: T): z.output<T> {
  const params = Object.fromEntries(new URL(request.url).searchParams);
  const result = schema.safeParse(params);
  if (!result.success) {
    const fields = result.error.issues.map((issue) => ({ field: issue.path.join("."), problem: issue.message }));
    throw new BatonError(
      "invalid_request",
      `Bad query: ${fields.map((f) => `${f.field}: ${f.problem}`).join("; ")}.`,
      { fields },
    );
  }
  return result.data;
}
