"use client";

import type { InboxDto } from "@/lib/views/questions/dto";
import { CountPill } from "@/components/ui/badge";
import { useInbox } from "./use-inbox";

/** The heading's count of unanswered questions, kept in step with the inbox below it. */
export function QuestionCount({ initialInbox, loadedAt }: { initialInbox: InboxDto; loadedAt: number }) {
  const { data } = useInbox(initialInbox, loadedAt, false);
  return (
    <CountPill className="ml-1 px-2.5 py-0.5 align-middle text-sm font-semibold" testId="question-count">
      {data.total} unanswered
    </CountPill>
  );
}
