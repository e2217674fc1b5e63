import { ThreadLink } from "@/components/shared/thread-link";
import { forwardRef } from "react";
import type { BoardCardDto } from "@/lib/board/dto";
import { FLAG_TITLES } from "@/lib/contract/lint";
import { SEVERITIES } from "@/lib/contract/severity";
import { SeverityBadge } from "@/components/shared/severity-badge";
import { visibleText } from "@/lib/contract/invisible";
import { AgentText, AgentTextList } from "@/components/ui/agent-text";
import { Age } from "@/components/ui/time";
import { DecisionControls } from "@/components/human/decision-controls";
import { cardReasons, flagReason } from "./card-reasons";
import { WorkChips } from "./work-chips";
import { UsageChip } from "@/components/usage/usage-chip";
import { workFlags } from "@/lib/integrations/work-flags";

interface BoardCardProps {
  card: BoardCardDto;
  now: number;
  focused: boolean;
  onFocus: () => void;
  /** Whether the person may approve and intervene (the server checks again). */
  canAct: boolean;
}

/** One thread on the board: everything a person needs without opening it; next_action largest. */
export const BoardCard = forwardRef<HTMLAnchorElement, BoardCardProps>(function BoardCard({ card, now, focused, onFocus, canAct }, ref) {
  const packet = card.active_packet;
  const counts = SEVERITIES.filter((severity) => packet.risk_counts[severity] > 0);
  const where = [card.project, card.branch, card.topic].filter(Boolean);
  const nextAction = packet.next_action;
  const name = card.agent ? `${card.agent} (${card.key})` : card.key;
  const reasons = card.column === "needs_you" ? cardReasons(card) : [];
  // A verdict that is missing only for want of configuration is told once, above the board.
  const flags = packet.flags;
  // The link and the action buttons are siblings: buttons inside a link are neither valid nor usable.
  // The link's name is its own text (an aria-label that says less than the text fails WCAG 2.5.3).
  return (
    <div className="relative rounded-lg bg-surface shadow-sm ring-1 ring-line focus-within:ring-2 focus-within:ring-focus hover:ring-line-strong">
      <ThreadLink
        ref={ref}
        threadKey={card.key}
        tabIndex={focused ? 0 : -1}
        onFocus={onFocus}
        data-testid="board-card"
        data-thread-key={card.key}
        title={visibleText(card.column_reason)}
        className="block rounded-lg p-3 outline-none"
      >
        <div className="flex flex-wrap items-center gap-1.5 text-xs text-muted">
          <SeverityBadge severity={packet.highest_severity} />
          <span className="font-semibold text-strong">{card.agent ? <AgentText text={card.agent} /> : "unknown agent"}</span>
          <AgentTextList className="min-w-0 truncate" items={where.length ? where : [card.key]} />
          <span className="ml-auto">
            <Age iso={packet.received_at} now={now} />
          </span>
        </div>
        <p className="mt-1.5 text-base leading-snug font-semibold">
          {nextAction ? <AgentText text={nextAction} /> : <span className="text-muted italic">No next action recorded</span>}
        </p>
        {reasons.length ? (
          <ul aria-label="Needs you because" className="mt-2 flex flex-wrap gap-1">
            {reasons.map((reason) => (
              <li key={reason.code} title={reason.detail ? visibleText(reason.detail) : undefined} className="rounded-full bg-amber-100 px-2 py-0.5 text-xs font-medium text-amber-950 dark:bg-amber-950 dark:text-amber-100">
                {reason.text}
              </li>
            ))}
          </ul>
        ) : null}
        <div className="mt-2 flex flex-wrap items-center gap-x-3 gap-y-1 text-xs text-muted">
          {counts.length ? (
            <span aria-label="Open risks by severity">
              {counts.map((severity) => `${packet.risk_counts[severity]} ${severity}`).join(", ")}
            </span>
          ) : (
            <span>no open risks</span>
          )}
          <VerdictLabel state={card.verdict.state} reasons={card.verdict.reasons} />
          <UsageChip usage={card.usage} />
        </div>
        {flags.length ? (
          <ul className="mt-2 space-y-0.5 text-xs break-words text-muted" aria-label="Flags">
            {flags.map((flag) => (
              <li key={flag.code} className="line-clamp-3">
                <span className="font-semibold text-strong">{FLAG_TITLES[flag.code]}:</span> <AgentText text={flagReason(flag.code, flag.reason)} />
              </li>
            ))}
          </ul>
        ) : null}
      </ThreadLink>
      {card.work ? <div className="px-3 pb-2"><WorkChips work={card.work} threadKey={card.key} name={name} canAct={canAct} tabIndex={focused ? 0 : -1} /></div> : null}
      {canAct ? (
        <div className="px-3 pb-2">
          <DecisionControls
            threadKey={card.key}
            packetId={packet.id}
            revision={packet.human.revision}
            decision={packet.human.decision}
            name={name}
            tabIndex={focused ? 0 : -1}
            quotes={workFlags(card.work ?? undefined).map((flag) => flag.reason)}
          />
        </div>
      ) : packet.human.decision ? (
        <p className="px-3 pb-2 text-xs text-muted">
          {packet.human.decision.kind} by <AgentText text={packet.human.decision.by} />
        </p>
      ) : null}
    </div>
  );
});

const VERDICT_STYLE = {
  pass: "text-success",
  fail: "font-semibold text-danger",
  missing: "",
} as const;

function VerdictLabel({ state, reasons }: { state: "pass" | "fail" | "missing"; reasons: string[] }) {
  return (
    <span className={VERDICT_STYLE[state]} title={visibleText(reasons.join("; "))}>
      verdict: {state}
    </span>
  );
}
