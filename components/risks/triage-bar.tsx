"use client";

import { Button } from "@/components/ui/button";
import { Note } from "@/components/ui/alert";
import type { TriageAction } from "./use-triage";

interface TriageBarProps {
  canAct: boolean;
  selected: number;
  hasCurrent: boolean;
  /** How many risks an action would triage: the selection, else the current row. */
  count: number;
  pending: boolean;
  snoozing: boolean;
  onAct: (action: Exclude<TriageAction, "snoozed">) => void;
  onSnooze: () => void;
  onClear: () => void;
}

/** The triage buttons (a, r, s on the keyboard), sticky above the list; a note for people who may only read. */
export function TriageBar({ canAct, selected, hasCurrent, count, pending, snoozing, onAct, onSnooze, onClear }: TriageBarProps) {
  if (!canAct) return <Note>You can read these risks; triaging them needs the operator or admin role.</Note>;
  const disabled = pending || count === 0;
  return (
    <div role="group" aria-label="Triage" className="sticky top-0 z-10 flex flex-wrap items-center gap-2 rounded-lg bg-zinc-100 p-2 dark:bg-zinc-900">
      <span className="text-sm text-zinc-700 dark:text-zinc-300" data-testid="triage-target">
        {selected ? `${selected} selected` : hasCurrent ? "No selection: acting on the current row" : "Nothing to triage"}
      </span>
      <Button variant="success" aria-keyshortcuts="a" disabled={disabled} onClick={() => onAct("acknowledged")}>
        Acknowledge {count}
      </Button>
      <Button variant="neutral" aria-keyshortcuts="r" disabled={disabled} onClick={() => onAct("resolved")}>
        Resolve {count}
      </Button>
      <Button variant="snooze" aria-keyshortcuts="s" aria-expanded={snoozing} disabled={disabled} onClick={onSnooze}>
        Snooze {count}…
      </Button>
      {selected ? (
        <Button variant="link" onClick={onClear}>
          Clear selection
        </Button>
      ) : null}
      {pending ? <span className="text-xs text-muted">Saving…</span> : null}
    </div>
  );
}
