import { ThreadLink } from "@/components/shared/thread-link";
import { forwardRef, Fragment, useContext } from "react";
import type { BoardCardDto } from "@/lib/board/dto";
import { FLAG_TITLES } from "@/lib/contract/lint";
import { SEVERITIES } from "@/lib/contract/severity";
import { SeverityBadge } from "@/components/shared/severity-badge";
import { visibleText } from "@/lib/contract/invisible";
import { AgentText, AgentTextList } from "@/components/ui/agent-text";
import { When } from "@/components/ui/time";
import { DecisionControls } from "@/components/human/decision-controls";
import { cardReasons, flagReason } from "./card-reasons";
import { ReportLostRace } from "./lost-races";
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

/**
 * One thread on the board in three lines: who (agent, project, branch, age), what (the next
 * action) and why (the reasons as chips, or the risks and verdict a person approves on), with
 * approve and intervene beside the why. Everything else is on the thread page.
 */
export const BoardCard = forwardRef<HTMLAnchorElement, BoardCardProps>(function BoardCard({ card, now, focused, onFocus, canAct }, ref) {
  const packet = card.active_packet;
  const where = [card.project, card.branch, card.topic].filter(Boolean);
  const nextAction = packet.next_action;
  const agent = card.agent ?? "unknown agent";
  const name = card.agent ? `${card.agent} (${card.key})` : card.key;
  const reasons = card.column === "needs_you" ? cardReasons(card) : [];
  const reportLostRace = useContext(ReportLostRace);
  return (
    // The link stretches over the card (its ::after) so that the whole card opens the thread,
    // while the buttons stay its siblings: buttons inside a link are neither valid nor usable.
    <div
      data-testid="board-card"
      data-thread-key={card.key}
      className="relative rounded-lg bg-surface px-2.5 py-1.5 shadow-sm ring-1 ring-line focus-within:ring-2 focus-within:ring-focus hover:ring-line-strong"
    >
      <div className="flex min-w-0 items-center gap-1.5 text-xs text-muted">
        <SeverityBadge severity={packet.highest_severity} />
        <span className="max-w-[45%] flex-none truncate font-semibold text-strong">
          <AgentText text={agent} />
        </span>
        <AgentTextList className="min-w-0 flex-1 truncate" items={where.length ? where : [card.key]} />
        <When iso={packet.received_at} written={packet.created_at} now={now} tabIndex={focused ? 0 : -1} shrinks className="relative z-10" />
      </div>
      <ThreadLink
        ref={ref}
        threadKey={card.key}
        tabIndex={focused ? 0 : -1}
        onFocus={onFocus}
        title={visibleText(card.column_reason)}
        className="mt-0.5 line-clamp-2 text-sm leading-5 font-semibold break-words outline-none after:absolute after:inset-0 after:rounded-lg"
      >
        {/* The agent is part of the link's name: a screen reader tabbing through cards hears who, then what. */}
        <span className="sr-only">
          <AgentText text={agent} />:{" "}
        </span>
        {nextAction ? <AgentText text={nextAction} /> : <span className="font-normal text-muted italic">No next action recorded</span>}
      </ThreadLink>
      <div className="mt-1 flex flex-wrap items-center gap-x-2 gap-y-1">
        {reasons.length ? (
          <ul aria-label="Needs you because" className="flex min-w-0 flex-wrap gap-1">
            {reasons.map((reason) => (
              <li
                key={reason.code}
                data-reason={reason.code}
                title={reason.detail ? visibleText(reason.detail) : undefined}
                className="rounded-full bg-amber-100 px-2 py-0.5 text-xs font-medium text-amber-950 dark:bg-amber-950 dark:text-amber-100"
              >
                {reason.text}
              </li>
            ))}
          </ul>
        ) : (
          <CardDetails card={card} />
        )}
        {canAct ? (
          // Above the stretched link; takes the whole row when the instruction field or a notice opens.
          <div className="relative z-10 ml-auto has-[[role=alert]]:basis-full has-[textarea]:basis-full">
            <DecisionControls
              threadKey={card.key}
              packetId={packet.id}
              revision={packet.human.revision}
              decision={packet.human.decision}
              name={name}
              tabIndex={focused ? 0 : -1}
              onConflict={reportLostRace ? (current) => reportLostRace({ key: card.key, name, current, packetId: packet.id }) : undefined}
              quotes={workFlags(card.work ?? undefined).map((flag) => flag.reason)}
            />
          </div>
        ) : packet.human.decision ? (
          <p className="ml-auto text-xs text-muted">
            {packet.human.decision.kind} by <AgentText text={packet.human.decision.by} />
          </p>
        ) : null}
      </div>
      {card.work || card.usage ? (
        // The work outside the agent: pull request, CI, review (links above the stretched link), and what it cost.
        <div className="relative z-10 mt-1 flex flex-wrap items-center gap-1 text-xs">
          <WorkChips work={card.work} threadKey={card.key} name={name} canAct={canAct} tabIndex={focused ? 0 : -1} />
          <UsageChip usage={card.usage} />
        </div>
      ) : null}
    </div>
  );
});

/**
 * The quiet line of a card with no reasons to show (it needs nobody now, or a person has
 * decided): its open risks, its verdict and every flag it carries, as the thread page lists them.
 */
export function CardDetails({ card }: { card: BoardCardDto }) {
  const packet = card.active_packet;
  const counts = SEVERITIES.filter((severity) => packet.risk_counts[severity] > 0);
  const verdictReasons = card.verdict.reasons;
  return (
    <p className="min-w-0 text-xs text-muted">
      <span aria-label="Open risks by severity">{counts.length ? counts.map((severity) => `${packet.risk_counts[severity]} ${severity}`).join(", ") : "no open risks"}</span>
      {" · "}
      <span className={VERDICT_STYLE[card.verdict.state]} title={visibleText(verdictReasons.join("; "))}>
        verdict: {card.verdict.state}
      </span>
      {packet.flags.map((flag) => (
        <Fragment key={flag.code}>
          {" · "}
          <span data-flag={flag.code} title={visibleText(flagReason(flag.code, flag.reason))}>
            {FLAG_TITLES[flag.code]}
          </span>
        </Fragment>
      ))}
    </p>
  );
}

const VERDICT_STYLE = {
  pass: "text-success",
  fail: "font-semibold text-danger",
  missing: "",
} as const;
