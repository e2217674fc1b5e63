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
  // The link and the action buttons are siblings: buttons inside a link are neither valid nor usable.
  return (
    <div className="rounded-lg bg-surface shadow-sm ring-1 ring-line">
      <ThreadLink
        ref={ref}
        threadKey={card.key}
        tabIndex={focused ? 0 : -1}
        onFocus={onFocus}
        data-testid="board-card"
        data-thread-key={card.key}
        aria-label={visibleText(`${card.agent ?? card.key}: ${nextAction ?? "no next action"}`)}
        title={visibleText(card.column_reason)}
        className="block rounded-lg p-3 outline-none hover:ring-1 hover:ring-zinc-400 focus-visible:ring-2 focus-visible:ring-focus dark:hover:ring-zinc-600"
      >
        <div className="flex flex-wrap items-center gap-1.5 text-xs text-muted">
          <SeverityBadge severity={packet.highest_severity} />
          <span className="font-semibold text-strong">{card.agent ? <AgentText text={card.agent} /> : "unknown agent"}</span>
          <AgentTextList className="truncate" items={where.length ? where : [card.key]} />
        </div>
        <p className="mt-1.5 text-base leading-snug font-semibold">
          {nextAction ? <AgentText text={nextAction} /> : <span className="text-muted italic">No next action recorded</span>}
        </p>
        <div className="mt-2 flex flex-wrap items-center gap-x-3 gap-y-1 text-xs text-muted">
          {counts.length ? (
            <span aria-label="Open risks by severity">
              {counts.map((severity) => `${packet.risk_counts[severity]} ${severity}`).join(", ")}
            </span>
          ) : (
            <span>no open risks</span>
          )}
          {packet.human.unanswered_questions ? <span>{packet.human.unanswered_questions} question(s) unanswered</span> : null}
          <VerdictLabel state={card.verdict.state} reasons={card.verdict.reasons} />
          <Age iso={packet.received_at} now={now} />
        </div>
        {packet.flags.length ? (
          <ul className="mt-2 space-y-0.5 text-xs break-words" aria-label="Flags">
            {packet.flags.map((flag) => (
              <li key={flag.code}>
                <span className="font-semibold">{FLAG_TITLES[flag.code]}:</span> <AgentText text={flag.reason} />
              </li>
            ))}
          </ul>
        ) : null}
      </ThreadLink>
      {canAct ? (
        <div className="px-3 pb-2">
          <DecisionControls
            threadKey={card.key}
            packetId={packet.id}
            revision={packet.human.revision}
            decision={packet.human.decision}
            name={name}
            tabIndex={focused ? 0 : -1}
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
    <span className={VERDICT_STYLE[state]} title={reasons.join("; ")}>
      verdict: {state}
    </span>
  );
}
