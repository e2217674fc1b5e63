"use client";

import { useId, useState } from "react";
import { Button } from "@/components/ui/button";
import { InlineDialog } from "@/components/ui/dialog";
import { Field, Input } from "@/components/ui/field";

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

  return (
    <InlineDialog label={`Snooze ${what}`} onClose={onCancel} className="flex flex-wrap items-end gap-3 ring-violet-300 dark:ring-violet-800">
      <form
        className="flex flex-wrap items-end gap-2"
        onSubmit={(event) => {
          event.preventDefault();
          if (valid) onSnooze(startOfLocalDay(date));
        }}
      >
        <Field label="Snooze until">
          <Input
            id={`${id}-date`}
            // Focus lands here when the choice opens.
            autoFocus
            type="date"
            required
            min={tomorrow}
            value={date}
            onChange={(event) => setDate(event.target.value)}
          />
        </Field>
        <Button type="submit" variant="snooze" disabled={pending || !valid}>
          Snooze until this date
        </Button>
      </form>
      <Button variant="choice" disabled={pending} onClick={() => onSnooze(null)}>
        Until severity rises
      </Button>
      <Button variant="link" onClick={onCancel}>
        Cancel
      </Button>
    </InlineDialog>
  );
}
