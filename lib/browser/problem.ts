import type { SendResult } from "./send-json";

/** What went wrong with an action, ready to show: lines of text and the fields to mark invalid. */
export interface Problem {
  /** A new number per failure: the alert is re-created, so the same message is announced again. */
  id: number;
  /** The API's error code ("conflict", "rate_limited"…), or null for a problem found in the browser. */
  code: string | null;
  heading: string | null;
  lines: string[];
  fields: string[];
}

let problemCount = 0;

/** A problem found in the browser before sending (a short password, two passwords that differ). */
export function localProblem(fields: string[], line: string): Problem {
  problemCount += 1;
  return { id: problemCount, code: null, heading: null, lines: [line], fields };
}

type Failure = Extract<SendResult<unknown>, { ok: false }>;

/**
 * Turns an API error into lines naming the fields: validation errors list
 * `{field, problem}` (each shown as "<label>: <problem>"); conflicts may name one `field`.
 */
export function problemOf(failure: Failure, labels: Record<string, string> = {}, heading: string | null = null): Problem {
  problemCount += 1;
  const details = (failure.details ?? {}) as { fields?: unknown; field?: unknown };
  const listed = Array.isArray(details.fields)
    ? details.fields.flatMap((entry: unknown) => {
        const { field, problem } = (entry ?? {}) as { field?: unknown; problem?: unknown };
        return typeof field === "string" && typeof problem === "string" ? [{ field, problem }] : [];
      })
    : [];
  if (listed.length) {
    return {
      id: problemCount,
      code: failure.code,
      heading,
      lines: listed.map(({ field, problem }) => `${labels[field] ?? field}: ${problem}`),
      fields: listed.map(({ field }) => field),
    };
  }
  const field = typeof details.field === "string" ? details.field : null;
  const line = field && labels[field] && !failure.message.toLowerCase().includes(field.toLowerCase()) ? `${labels[field]}: ${failure.message}` : failure.message;
  return { id: problemCount, code: failure.code, heading, lines: [line], fields: field ? [field] : [] };
}

/** True when `problem` names `field`: the input gets aria-invalid. */
export const names = (problem: Problem | null, field: string): boolean => problem?.fields.includes(field) ?? false;
