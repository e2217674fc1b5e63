"use client";

import { useId, useState, type KeyboardEvent } from "react";

/** A local calendar date (YYYY-MM-DD), as a date input reads and writes it. */
function localDate(date: Date): string {
  const pad = (value: number) => String(value).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** The start of a local calendar date, as the ISO instant the API takes. */
export function startOfLocalDay(value: string): string {
  return new Date(`${value}T00:00:00`).toISOString();
}

interface SnoozeChoiceProps {
  /** What is being snoozed, for the dialog's name ("2 risks"). */
  what: string;
  pending: boolean;
  /** An ISO instant, or null for until the severity rises. */
  onSnooze: (until: string | null) => void;
  onCancel: () => void;
}

/**
 * The snooze choice: until a date (tomorrow at the earliest), or until the
 * risk's severity rises. Enter in the date field snoozes until that date; Esc cancels.
 */
export function SnoozeChoice({ what, pending, onSnooze, onCancel }: SnoozeChoiceProps) {
  const id = useId();
  const [today] = useState(() => new Date());
  const tomorrow = localDate(new Date(today.getFullYear(), today.getMonth(), today.getDate() + 1));
  const [date, setDate] = useState(() => localDate(new Date(today.getFullYear(), today.getMonth(), today.getDate() + 7)));
  const valid = /^\d{4}-\d{2}-\d{2}$/.test(date) && date >= tomorrow;

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      onCancel();
    }
  };

  return (
    <div
      role="dialog"
      aria-label={`Snooze ${what}`}
      onKeyDown={onKeyDown}
      className="flex flex-wrap items-end gap-3 rounded-lg bg-white p-3 shadow ring-1 ring-violet-300 dark:bg-zinc-900 dark:ring-violet-800"
    >
      <form
        className="flex flex-wrap items-end gap-2"
        onSubmit={(event) => {
          event.preventDefault();
          if (valid) onSnooze(startOfLocalDay(date));
        }}
      >
        <label htmlFor={`${id}-date`} className="flex flex-col text-xs text-zinc-600 dark:text-zinc-400">
          Snooze until
          <input
            id={`${id}-date`}
            // Focus lands here when the choice opens.
            autoFocus
            type="date"
            required
            min={tomorrow}
            value={date}
            onChange={(event) => setDate(event.target.value)}
            className="mt-0.5 rounded border-0 bg-zinc-50 px-2 py-1 text-sm text-zinc-900 ring-1 ring-zinc-300 focus-visible:ring-2 focus-visible:ring-sky-600 focus-visible:outline-none dark:bg-zinc-950 dark:text-zinc-100 dark:ring-zinc-700"
          />
        </label>
        <button
          type="submit"
          disabled={pending || !valid}
          className="rounded bg-violet-700 px-3 py-1 text-sm font-semibold text-white hover:bg-violet-800 focus-visible:ring-2 focus-visible:ring-sky-600 focus-visible:ring-offset-2 focus-visible:outline-none disabled:opacity-50"
        >
          Snooze until this date
        </button>
      </form>
      <button
        type="button"
        disabled={pending}
        onClick={() => onSnooze(null)}
        className="rounded bg-zinc-100 px-3 py-1 text-sm font-medium ring-1 ring-zinc-300 hover:bg-zinc-200 focus-visible:ring-2 focus-visible:ring-sky-600 focus-visible:outline-none disabled:opacity-50 dark:bg-zinc-800 dark:ring-zinc-700 dark:hover:bg-zinc-700"
      >
        Until severity rises
      </button>
      <button
        type="button"
        onClick={onCancel}
        className="rounded px-3 py-1 text-sm text-zinc-700 underline focus-visible:ring-2 focus-visible:ring-sky-600 focus-visible:outline-none dark:text-zinc-300"
      >
        Cancel
      </button>
    </div>
  );
}
