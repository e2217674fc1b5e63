"use client";

import Link from "next/link";
import type { TimelineFeedEventDto } from "@/lib/timeline/dto";
import { formatMoment } from "@/lib/timeline/window";
import { threadHref } from "@/lib/threads/href";

interface TimelineFeedProps {
  events: TimelineFeedEventDto[];
  windowLabel: string;
  hasOlder: boolean;
  loadingOlder: boolean;
  onLoadOlder: () => void;
}

/** The ledger of the timeline's threads, in words, newest first; older pages on request. */
export function TimelineFeed({ events, windowLabel, hasOlder, loadingOlder, onLoadOlder }: TimelineFeedProps) {
  return (
    <section aria-labelledby="timeline-feed-heading" className="space-y-2">
      <h2 id="timeline-feed-heading" className="text-lg font-semibold">
        Ledger
      </h2>
      <p className="text-xs text-zinc-500">What happened to these threads in the last {windowLabel}, newest first (heartbeats are the ticks above).</p>
      {events.length ? (
        <ol className="space-y-1 text-sm" aria-label="Ledger events">
          {events.map((event) => (
            <li key={event.seq} className="flex flex-wrap items-baseline gap-x-2">
              <time dateTime={event.at} className="font-mono text-xs text-zinc-500">
                {formatMoment(event.at)}
              </time>
              <Link href={threadHref(event.thread_key)} prefetch={false} className="break-all text-sky-700 underline dark:text-sky-400">
                {event.thread_key}
              </Link>
              <span className="break-words">{event.text}</span>
              <span className="text-xs text-zinc-500">by {event.actor}</span>
            </li>
          ))}
        </ol>
      ) : (
        <p className="text-sm text-zinc-500">Nothing happened to these threads in this window.</p>
      )}
      {hasOlder ? (
        <button
          type="button"
          onClick={onLoadOlder}
          disabled={loadingOlder}
          className="rounded-md px-3 py-1 text-sm ring-1 ring-zinc-300 focus-visible:outline-2 focus-visible:outline-sky-600 disabled:opacity-50 dark:ring-zinc-700"
        >
          {loadingOlder ? "Loading…" : "Show older events"}
        </button>
      ) : null}
    </section>
  );
}
