import type { z } from "zod";
import { parseInput } from "../core/parse-input";

/** Parses a request's query string with a zod schema; errors name each parameter. */
export function parseQuery<T extends z.ZodType>(request: Request, schema: T): z.output<T> {
  return parseInput(schema, Object.fromEntries(new URL(request.url).searchParams), "query");
}
