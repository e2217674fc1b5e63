"use client";

import { useId } from "react";
import { Button } from "@/components/ui/button";
import { Note } from "@/components/ui/alert";
import type { RiskGroupDto } from "@/lib/views/risks/dto";
import { triageBlocker } from "@/lib/views/risks/triage-state";
import type { TriageAction } from "./use-triage";

interface TriageBarProps {
  canAct: boolean;
  selected: number;
  hasCurrent: boolean;
  /** The risks an action would triage: the selection, else the current row. */
  acting: RiskGroupDto[];
  pending: boolean;
  snoozing: boolean;
  onAct: (action: Exclude<TriageAction, "snoozed">) => void;
  onSnooze: () => void;
  onClear: () => void;
}

const LABELS: Record<TriageAction, string> = { acknowledged: "Acknowledge", resolved: "Resolve", snoozed: "Snooze" };

/**
 * The triage buttons (a, r, s on the keyboard), sticky above the list; a note for people who
 * may only read. A button that does not apply to the selection is disabled and says why.
 */
export function TriageBar({ canAct, selected, hasCurrent, acting, pending, snoozing, onAct, onSnooze, onClear }: TriageBarProps) {
  const id = useId();
  if (!canAct) return <Note>You can read these risks; triaging them needs the operator or admin role.</Note>;
  const count = acting.length;
  const blockers = (["acknowledged", "resolved", "snoozed"] as const).map((action) => ({ action, reason: triageBlocker(action, acting) }));
  const reasons = [...new Set(blockers.flatMap(({ action, reason }) => (reason && count ? [`${LABELS[action]}: ${reason}`] : [])))];
  const reasonId = `${id}-why`;
  const props = (action: TriageAction) => {
    const blocked = blockers.find((blocker) => blocker.action === action)!.reason !== null;
    return { disabled: pending || blocked, "aria-describedby": blocked && count ? reasonId : undefined };
  };
  return (
    <div role="group" aria-label="Triage" className="sticky top-0 z-10 flex flex-wrap items-center gap-2 rounded-lg bg-zinc-100 p-2 dark:bg-zinc-900">
      <span className="text-sm text-zinc-700 dark:text-zinc-300" data-testid="triage-target">
        {selected ? `${selected} selected` : hasCurrent ? "No selection: acting on the current row" : "Nothing to triage"}
      </span>
      <Button variant="success" aria-keyshortcuts="a" {...props("acknowledged")} onClick={() => onAct("acknowledged")}>
        Acknowledge {count}
      </Button>
      <Button variant="neutral" aria-keyshortcuts="r" {...props("resolved")} onClick={() => onAct("resolved")}>
        Resolve {count}
      </Button>
      <Button variant="snooze" aria-keyshortcuts="s" aria-expanded={snoozing} {...props("snoozed")} onClick={onSnooze}>
        Snooze {count}…
      </Button>
      {selected ? (
        <Button variant="link" onClick={onClear}>
          Clear selection
        </Button>
      ) : null}
      {pending ? <span className="text-xs text-muted">Saving…</span> : null}
      {reasons.length ? (
        <span id={reasonId} className="basis-full text-xs text-zinc-700 dark:text-zinc-300">
          {reasons.join(" ")}
        </span>
      ) : null}
    </div>
  );
}
