import { describeLedgerEvent } from "@/lib/ledger/describe";
import type { LedgerEventDto } from "@/lib/ledger/dto";
import { Section } from "./section";

/** The thread's ledger: who did what, when; nothing here is ever edited. */
export function LedgerList({ events }: { events: LedgerEventDto[] }) {
  return (
    <Section id="ledger" title="Ledger">
      <ol className="space-y-1 text-sm">
        {events.map((event) => (
          <li key={event.seq} className="flex flex-wrap gap-2">
            <time dateTime={event.at} className="font-mono text-xs text-zinc-500">
              {event.at.replace("T", " ").slice(0, 19)}
            </time>
            <span>{describeLedgerEvent(event)}</span>
            <span className="text-xs text-zinc-500">by {event.actor}</span>
            {event.packet_id ? <code className="text-xs text-zinc-500">{event.packet_id}</code> : null}
          </li>
        ))}
      </ol>
    </Section>
  );
}
