import { describeLedgerEvent } from "@/lib/events/describe";
import type { LedgerEventDto } from "@/lib/events/dto";
import { AgentText } from "@/components/ui/agent-text";
import { Panel } from "@/components/ui/panel";
import { When } from "@/components/ui/time";

/** The thread's ledger: who did what, when; nothing here is ever edited. */
export function LedgerList({ events, now }: { events: LedgerEventDto[]; now: number }) {
  return (
    <Panel headingId="ledger" title="Ledger">
      <ol className="space-y-1 text-sm">
        {events.map((event) => (
          <li key={event.seq} className="flex flex-wrap gap-2">
            <When iso={event.at} now={now} className="font-mono text-xs text-muted" />
            <AgentText text={describeLedgerEvent(event)} />
            <span className="text-xs text-muted">
              by <AgentText text={event.actor} />
            </span>
            {event.packet_id ? <code className="text-xs text-muted">{event.packet_id}</code> : null}
          </li>
        ))}
      </ol>
    </Panel>
  );
}
