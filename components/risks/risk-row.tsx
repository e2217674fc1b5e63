"use client";

import { ThreadLink } from "@/components/shared/thread-link";
import { useId } from "react";
import { SeverityBadge } from "@/components/shared/severity-badge";
import { AgentText } from "@/components/ui/agent-text";
import { Badge } from "@/components/ui/badge";
import { Age, Moment } from "@/components/ui/time";
import { visibleText } from "@/lib/contract/invisible";
import type { RiskGroupDto } from "@/lib/views/risks/dto";
import type { RiskState } from "@/lib/views/risks/triage-state";

const STATE_STYLES: Record<RiskState, string> = {
  regressed: "bg-red-700 font-bold text-white uppercase tracking-wide",
  open: "bg-surface text-strong ring-1 ring-zinc-300 dark:ring-zinc-700",
  acknowledged: "bg-emerald-100 text-emerald-900 dark:bg-emerald-950 dark:text-emerald-200",
  snoozed: "bg-violet-100 text-violet-900 dark:bg-violet-950 dark:text-violet-200",
  resolved: "bg-zinc-200 text-zinc-700 dark:bg-zinc-800 dark:text-zinc-300",
};

export function StateBadge({ state }: { state: RiskState }) {
  return <Badge className={STATE_STYLES[state]}>{state}</Badge>;
}

function Seen({ label, at, now }: { label: string; at: string; now: number }) {
  return (
    <span>
      {label} <Age iso={at} now={now} />
    </span>
  );
}

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`;

interface RiskRowProps {
  group: RiskGroupDto;
  /** When the shown data was made (ms): ages are measured from it. */
  now: number;
  /** The roving focus: only the current row is in the tab order. */
  current: boolean;
  selected: boolean;
  canAct: boolean;
  rowRef: (element: HTMLElement | null) => void;
  onFocusRow: () => void;
  onToggle: () => void;
}

/**
 * One risk (a fingerprint) across the threads whose active packets carry it:
 * severity, wording, states, threads, first and last seen, occurrences.
 * Every agent string is rendered as text.
 */
export function RiskRow({ group, now, current, selected, canAct, rowRef, onFocusRow, onToggle }: RiskRowProps) {
  const id = useId();
  const detailId = `${id}-detail`;
  return (
    <div
      ref={rowRef}
      role="listitem"
      tabIndex={current ? 0 : -1}
      aria-labelledby={detailId}
      aria-current={current ? "true" : undefined}
      data-testid="risk-group"
      data-fingerprint={group.fingerprint}
      data-selected={selected ? "true" : undefined}
      onFocus={onFocusRow}
      className={`flex gap-3 rounded-lg border-l-4 p-3 shadow-sm ring-1 outline-none focus-visible:ring-2 focus-visible:ring-focus ${
        group.regressed ? "ring-red-300 dark:ring-red-900" : "ring-line"
      } ${selected ? "bg-sky-50 dark:bg-sky-950" : "bg-surface"} ${current ? "border-sky-500" : "border-transparent"}`}
    >
      {canAct ? (
        <input
          type="checkbox"
          checked={selected}
          onChange={onToggle}
          aria-label={`Select ${visibleText(group.detail)}`}
          tabIndex={current ? 0 : -1}
          className="mt-1 size-4 shrink-0 accent-sky-700"
        />
      ) : null}
      <div className="min-w-0 flex-1">
        <div className="flex flex-wrap items-center gap-2">
          <SeverityBadge severity={group.severity} />
          {group.states.map((state) => (
            <StateBadge key={state} state={state} />
          ))}
        </div>
        <p id={detailId} className="mt-1 font-medium break-words whitespace-pre-wrap">
          <AgentText text={group.detail} multiline />
        </p>
        <ul className="mt-1 space-y-0.5 text-sm" aria-label="Threads carrying it">
          {group.threads.map((thread) => (
            <li key={thread.thread_key} className="flex flex-wrap items-center gap-x-2 break-words">
              <ThreadLink threadKey={thread.thread_key} className="font-mono text-link underline">
                <AgentText text={thread.thread_key} />
              </ThreadLink>
              <span className="text-muted">· {thread.agent ? <AgentText text={thread.agent} /> : "unknown agent"}</span>
              {thread.severity !== group.severity ? <span className="text-xs text-muted">· {thread.severity}</span> : null}
              {group.threads.length > 1 || thread.state !== "open" ? <StateBadge state={thread.state} /> : null}
              {thread.triage ? (
                <span className="text-xs text-muted">
                  by {thread.triage.by}
                  {thread.triage.state === "snoozed" ? (
                    thread.triage.snoozed_until ? (
                      <>
                        {" "}
                        until <Moment iso={thread.triage.snoozed_until} />
                      </>
                    ) : (
                      " until its severity rises"
                    )
                  ) : null}
                </span>
              ) : null}
            </li>
          ))}
        </ul>
        <p className="mt-1 flex flex-wrap gap-x-3 text-xs text-muted">
          <Seen label="first seen" at={group.first_seen} now={now} />
          <Seen label="last seen" at={group.last_seen} now={now} />
          <span>{plural(group.occurrences, "occurrence")}</span>
          <span>{plural(group.threads.length, "thread")}</span>
        </p>
      </div>
    </div>
  );
}
