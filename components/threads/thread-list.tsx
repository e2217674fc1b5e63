import type { ThreadCardDto } from "@/lib/threads/dto";
import { FLAG_TITLES } from "@/lib/packet/lint";
import { SeverityBadge } from "./severity-badge";

/** The first page's list: every active thread with its next action, severity and flags. */
export function ThreadList({ threads }: { threads: ThreadCardDto[] }) {
  return (
    <ul className="divide-y divide-zinc-200 rounded-lg bg-white shadow-sm ring-1 ring-zinc-200 dark:divide-zinc-800 dark:bg-zinc-900 dark:ring-zinc-800">
      {threads.map((thread) => {
        const packet = thread.active_packet;
        return (
          <li key={thread.key} className="p-4" data-testid="thread-row">
            <div className="flex flex-wrap items-center gap-2 text-xs text-zinc-500">
              <SeverityBadge severity={packet.highest_severity} />
              <span className="font-mono">{thread.key}</span>
              {thread.agent ? <span>agent {thread.agent}</span> : null}
              <time dateTime={packet.received_at}>received {packet.received_at.replace("T", " ").slice(0, 16)} UTC</time>
            </div>
            <p className="mt-1 text-lg font-medium">
              {packet.next_action ?? <span className="text-zinc-500 italic">No next action recorded</span>}
            </p>
            {packet.flags.length ? (
              <ul className="mt-2 flex flex-wrap gap-2" aria-label="Flags">
                {packet.flags.map((flag) => (
                  <li key={flag.code} className="rounded bg-zinc-100 px-2 py-0.5 text-xs dark:bg-zinc-800" title={flag.reason}>
                    <span className="font-semibold">{FLAG_TITLES[flag.code]}</span>: {flag.reason}
                  </li>
                ))}
              </ul>
            ) : null}
          </li>
        );
      })}
    </ul>
  );
}
