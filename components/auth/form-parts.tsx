import type { SendResult } from "@/lib/browser/send-json";

/** Shared pieces of the sign-in, first-run and admin forms: styles and the error box. */

export const inputClass =
  "rounded-md border border-zinc-300 bg-white px-2 py-1 text-sm aria-[invalid=true]:border-red-600 dark:border-zinc-700 dark:bg-zinc-900 dark:aria-[invalid=true]:border-red-500 focus-visible:outline-2 focus-visible:outline-sky-600";
export const labelClass = "flex flex-col gap-1 text-xs text-zinc-600 dark:text-zinc-400";
export const buttonClass =
  "rounded-md bg-sky-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-sky-800 disabled:opacity-60 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-sky-600";
export const secondaryButtonClass =
  "rounded-md px-2 py-1 text-sm ring-1 ring-zinc-300 hover:bg-zinc-100 disabled:opacity-60 focus-visible:outline-2 focus-visible:outline-sky-600 dark:ring-zinc-700 dark:hover:bg-zinc-800";
export const dangerButtonClass =
  "rounded-md bg-red-700 px-2 py-1 text-sm font-medium text-white hover:bg-red-800 disabled:opacity-60 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-red-600";
export const cardClass = "rounded-lg bg-white p-4 shadow-sm ring-1 ring-zinc-200 dark:bg-zinc-900 dark:ring-zinc-800";

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

/** The error box: role="alert", so a screen reader announces it as soon as it appears. Text only. */
export function FormAlert({ problem, id }: { problem: Problem | null; id?: string }) {
  if (!problem) return null;
  return (
    <div
      key={problem.id}
      id={id}
      role="alert"
      className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-800 ring-1 ring-red-200 dark:bg-red-950 dark:text-red-200 dark:ring-red-900"
    >
      {problem.heading ? <p className="font-medium">{problem.heading}</p> : null}
      {problem.lines.length === 1 ? (
        <p>{problem.lines[0]}</p>
      ) : (
        <ul className="list-disc pl-5">
          {problem.lines.map((line, index) => (
            <li key={index}>{line}</li>
          ))}
        </ul>
      )}
    </div>
  );
}
