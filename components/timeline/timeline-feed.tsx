"use client";

import { ThreadLink } from "@/components/shared/thread-link";
import type { TimelineFeedEventDto } from "@/lib/views/timeline/dto";
import { AgentText } from "@/components/ui/agent-text";
import { Button } from "@/components/ui/button";
import { When } from "@/components/ui/time";

interface TimelineFeedProps {
  events: TimelineFeedEventDto[];
  /** What "5 min ago" is measured from. */
  now: number;
  windowLabel: string;
  hasOlder: boolean;
  loadingOlder: boolean;
  onLoadOlder: () => void;
}

/** The ledger of the timeline's threads, in words, newest first; older pages on request. */
export function TimelineFeed({ events, now, windowLabel, hasOlder, loadingOlder, onLoadOlder }: TimelineFeedProps) {
  return (
    <section aria-labelledby="timeline-feed-heading" className="space-y-2">
      <h2 id="timeline-feed-heading" className="text-lg font-semibold">
        Ledger
      </h2>
      <p className="text-xs text-muted">What happened to these threads in the last {windowLabel}, newest first (heartbeats are the ticks above).</p>
      {events.length ? (
        <ol className="space-y-1 text-sm" aria-label="Ledger events">
          {events.map((event) => (
            <li key={event.seq} className="flex flex-wrap items-baseline gap-x-2">
              <When iso={event.at} now={now} className="font-mono text-xs text-muted" />
              <ThreadLink threadKey={event.thread_key} className="break-all text-link underline">
                <AgentText text={event.thread_key} />
              </ThreadLink>
              <AgentText className="break-words" text={event.text} />
              <span className="text-xs text-muted">
                by <AgentText text={event.actor} />
              </span>
            </li>
          ))}
        </ol>
      ) : (
        <p className="text-sm text-muted">Nothing happened to these threads in this window.</p>
      )}
      {hasOlder ? (
        <Button onClick={onLoadOlder} disabled={loadingOlder}>
          {loadingOlder ? "Loading…" : "Show older events"}
        </Button>
      ) : null}
    </section>
  );
}
