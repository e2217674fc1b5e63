"use client";

import { ThreadLink } from "@/components/shared/thread-link";
import { useId } from "react";
import { SeverityBadge } from "@/components/shared/severity-badge";
import { AgentText } from "@/components/ui/agent-text";
import { Badge } from "@/components/ui/badge";
import { When } from "@/components/ui/time";
import type { RovingItem } from "@/lib/browser/use-roving-list";
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

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`;

interface RiskRowProps {
  group: RiskGroupDto;
  /** When the shown data was made (ms): ages are measured from it. */
  now: number;
  /** The roving focus: only the current row is in the tab order. */
  roving: RovingItem;
  selected: boolean;
  canAct: boolean;
  onToggle: () => void;
}

/** A cell's label on a phone, where the rows stack and the header is out of sight. */
function PhoneLabel({ children }: { children: React.ReactNode }) {
  return <span className="text-muted lg:hidden">{children} </span>;
}

/**
 * One risk (a fingerprint) across the threads whose active packets carry it, as a table row:
 * severity and states, wording, threads, first and last seen, occurrences. On a phone the
 * cells stack. Every agent string is rendered as text.
 */
export function RiskRow({ group, now, roving, selected, canAct, onToggle }: RiskRowProps) {
  const id = useId();
  const detailId = `${id}-detail`;
  return (
    <tr
      {...roving.attributes}
      aria-labelledby={detailId}
      aria-selected={canAct ? selected : undefined}
      data-testid="risk-group"
      data-fingerprint={group.fingerprint}
      data-selected={selected ? "true" : undefined}
      className={`border-b border-l-4 align-top text-sm outline-none focus-visible:outline-2 focus-visible:-outline-offset-2 focus-visible:outline-focus max-lg:grid max-lg:grid-cols-[1.5rem_minmax(0,1fr)] max-lg:gap-x-2 max-lg:gap-y-1 max-lg:px-2 max-lg:py-1.5 ${
        group.regressed ? "border-b-red-300 dark:border-b-red-900" : "border-b-line"
      } ${selected ? "bg-sky-50 dark:bg-sky-950" : "bg-surface"} ${roving.current ? "border-l-sky-500" : "border-l-transparent"}`}
    >
      <td className="lg:py-1.5 lg:pl-2 max-lg:row-span-5">
        {canAct ? (
          <input
            type="checkbox"
            checked={selected}
            onChange={onToggle}
            aria-label={`Select ${visibleText(group.detail)}`}
            tabIndex={roving.attributes.tabIndex}
            className="mt-0.5 size-4 shrink-0 accent-sky-700"
          />
        ) : null}
      </td>
      <td className="lg:px-2 lg:py-1.5">
        <div className="flex flex-wrap items-center gap-1">
          <SeverityBadge severity={group.severity} />
          {group.states.map((state) => (
            <StateBadge key={state} state={state} />
          ))}
        </div>
      </td>
      <td className="lg:px-2 lg:py-1.5">
        <p id={detailId} className="font-medium [overflow-wrap:anywhere] whitespace-pre-wrap">
          <AgentText text={group.detail} multiline />
        </p>
      </td>
      <td className="text-xs lg:px-2 lg:py-1.5">
        <ThreadList threads={group.threads.slice(0, THREADS_SHOWN)} group={group} label="Threads carrying it" />
        {group.threads.length > THREADS_SHOWN ? (
          <details>
            <summary className="min-h-6 cursor-pointer text-link">{plural(group.threads.length - THREADS_SHOWN, "more thread")}</summary>
            <ThreadList threads={group.threads.slice(THREADS_SHOWN)} group={group} label="More threads carrying it" />
          </details>
        ) : null}
      </td>
      <td className="text-xs text-muted lg:px-2 lg:py-1.5">
        <span className="block">
          <PhoneLabel>first seen</PhoneLabel>
          <When iso={group.first_seen} now={now} />
        </span>
        <span className="block">
          <PhoneLabel>last seen</PhoneLabel>
          <When iso={group.last_seen} now={now} />
        </span>
      </td>
      <td className="text-xs text-muted lg:px-2 lg:py-1.5 lg:text-right">
        {plural(group.occurrences, "occurrence")}
        <span className="lg:hidden"> · {plural(group.threads.length, "thread")}</span>
      </td>
    </tr>
  );
}

/** A row shows its first two threads; the rest open below them (a risk that nine threads carry would be nine lines). */
const THREADS_SHOWN = 2;

function ThreadList({ threads, group, label }: { threads: RiskGroupDto["threads"]; group: RiskGroupDto; label: string }) {
  return (
    <ul className="space-y-0.5" aria-label={label}>
      {threads.map((thread) => (
        <li key={thread.thread_key} className="flex flex-wrap items-center gap-x-1.5 break-words">
          <ThreadLink threadKey={thread.thread_key} className="font-mono text-link underline">
            <AgentText text={thread.thread_key} />
          </ThreadLink>
          <span className="text-muted">· {thread.agent ? <AgentText text={thread.agent} /> : "unknown agent"}</span>
          {thread.severity !== group.severity ? <span className="text-muted">· {thread.severity}</span> : null}
          {/* A thread's own state only where the row's threads differ: otherwise the row's badge says it. */}
          {group.states.length > 1 ? <StateBadge state={thread.state} /> : null}
          {thread.triage ? (
            <span className="text-muted">
              by {thread.triage.by}
              {thread.triage.state === "snoozed" ? (
                thread.triage.snoozed_until ? (
                  <>
                    {" "}
                    until <When iso={thread.triage.snoozed_until} />
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
  );
}
