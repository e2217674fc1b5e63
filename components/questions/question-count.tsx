"use client";

import type { InboxDto } from "@/lib/human/inbox-dto";
import { useInbox } from "./use-inbox";

/** The heading's count of unanswered questions, kept in step with the inbox below it. */
export function QuestionCount({ initialInbox, loadedAt }: { initialInbox: InboxDto; loadedAt: number }) {
  const { data } = useInbox(initialInbox, loadedAt, false);
  return (
    <span className="ml-1 rounded-full bg-zinc-200 px-2.5 py-0.5 align-middle text-sm font-semibold dark:bg-zinc-800" data-testid="question-count">
      {data.total} unanswered
    </span>
  );
}
