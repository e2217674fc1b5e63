import type { LedgerEventDto } from "@/lib/events/dto";
import { AgentText } from "@/components/ui/agent-text";
import { When } from "@/components/ui/time";

/** Watched files that could not be ingested, so that a broken generator is seen, not silent. */
/** `now` (ms): when the page was made; ages are measured from it. */
export function IngestErrors({ events, now }: { events: LedgerEventDto[]; now: number }) {
  if (!events.length) return null;
  return (
    <section aria-labelledby="ingest-errors" className="mb-6 rounded-lg bg-red-50 p-4 ring-1 ring-red-200 dark:bg-red-950 dark:ring-red-900">
      <h2 id="ingest-errors" className="font-semibold text-red-900 dark:text-red-100">
        Files that could not be ingested
      </h2>
      <ul className="mt-2 space-y-1 text-sm">
        {events.map((event) => (
          <li key={event.seq}>
            <AgentText className="font-mono" text={String(event.data.source_path ?? "unknown file")} />:{" "}
            <AgentText text={String(event.data.message ?? event.data.code ?? "invalid")} />{" "}
            <span className="text-muted">
              (<When iso={event.at} now={now} />)
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}
