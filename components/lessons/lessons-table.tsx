import { ThreadLink } from "@/components/shared/thread-link";
import { AgentText } from "@/components/ui/agent-text";
import { When } from "@/components/ui/time";
import type { LessonDto } from "@/lib/views/lessons/dto";

const cellClass = "px-2 py-2 align-top";

/** The recurring failures, one row each; every agent string is rendered as text. */
export function LessonsTable({ lessons, now }: { lessons: LessonDto[]; now: number }) {
  return (
    <table className="w-full border-collapse text-sm">
      <caption className="sr-only">Recurring failures, the most recently seen first</caption>
      <thead>
        <tr className="border-b border-zinc-300 text-left text-xs text-muted dark:border-zinc-700">
          <th scope="col" className={cellClass}>Attempt</th>
          <th scope="col" className={cellClass}>Reason</th>
          <th scope="col" className={`${cellClass} text-right`}>Occurrences</th>
          <th scope="col" className={cellClass}>Threads</th>
          <th scope="col" className={cellClass}>Last seen</th>
        </tr>
      </thead>
      <tbody>
        {lessons.map((lesson) => (
          <tr key={lesson.fingerprint} className="border-b border-line">
            <td className={cellClass}>
              <code className="break-all whitespace-pre-wrap">
                <AgentText text={lesson.attempt} multiline />
              </code>
              {lesson.exit_code !== null ? <span className="ml-2 text-xs text-muted">exit {lesson.exit_code}</span> : null}
            </td>
            <td className={`${cellClass} whitespace-pre-wrap`}>{lesson.reason ? <AgentText text={lesson.reason} multiline /> : <span className="text-muted">no reason given</span>}</td>
            <td className={`${cellClass} text-right font-mono`}>{lesson.occurrences}</td>
            <td className={cellClass}>
              <ul aria-label={`${lesson.thread_count} ${lesson.thread_count === 1 ? "thread" : "threads"}`} className="space-y-0.5">
                {lesson.threads.map((thread) => (
                  <li key={thread.key}>
                    <ThreadLink threadKey={thread.key} className="inline-block py-1 break-all text-link underline">
                      <AgentText text={thread.key} />
                    </ThreadLink>
                    {thread.agent ? <AgentText className="ml-1 text-xs text-muted" text={thread.agent} /> : null}
                  </li>
                ))}
                {lesson.thread_count > lesson.threads.length ? (
                  <li className="text-xs text-muted">and {lesson.thread_count - lesson.threads.length} more</li>
                ) : null}
              </ul>
            </td>
            <td className={`${cellClass} whitespace-nowrap`}>
              <When iso={lesson.last_seen} now={now} />
              <span className="block text-xs text-muted">
                since <When iso={lesson.first_seen} now={now} />
              </span>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
