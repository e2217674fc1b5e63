import type { z } from "zod";
import { BatonError } from "./errors";

/**
 * Parses input with a zod schema; a failure is a 400 naming every bad field
 * and what it accepts (the zod messages say it), never a 500.
 */
export function parseInput<T extends z.ZodType>(schema: T, value: unknown, what: string): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const fields = result.error.issues.map((issue) => ({ field: issue.path.join(".") || "(body)", problem: issue.message }));
  throw new BatonError("invalid_request", `Bad ${what}: ${fields.map((f) => `${f.field}: ${f.problem}`).join("; ")}.`, { fields });
}
