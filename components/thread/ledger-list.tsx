import type { LedgerEventDto } from "@/lib/ledger/events";
import { Section } from "./section";

const DESCRIBE: Record<string, (event: LedgerEventDto) => string> = {
  packet_received: (event) =>
    `packet received from ${String(event.data.source)}${event.data.superseded_on_arrival ? " (older than the active one: kept as history)" : ""}`,
  packet_superseded: () => "packet superseded by a newer one",
  thread_reopened: () => "thread re-opened by a new packet",
  thread_archived: (event) => `thread archived: ${String(event.data.reason ?? "")}`,
  human_approved: (event) => `approved the next action${event.data.note ? `: ${String(event.data.note)}` : ""} (revision ${String(event.data.revision)})`,
  human_intervened: (event) => `intervened: "${String(event.data.question)}" (revision ${String(event.data.revision)})`,
  human_answered: (event) =>
    `answered ${((event.data.answers as { question_id: string; answer: string }[] | undefined) ?? []).map((a) => `${a.question_id}: "${a.answer}"`).join(", ")} (revision ${String(event.data.revision)})`,
  packet_written_back: (event) => `human section (revision ${String(event.data.revision)}) written back to ${String(event.data.path)}`,
  writeback_skipped: (event) => `write-back skipped: ${String(event.data.reason)}`,
};

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
            <span>{DESCRIBE[event.kind]?.(event) ?? event.kind.replace(/_/g, " ")}</span>
            <span className="text-xs text-zinc-500">by {event.actor}</span>
            {event.packet_id ? <code className="text-xs text-zinc-500">{event.packet_id}</code> : null}
          </li>
        ))}
      </ol>
    </Section>
  );
}
