import type { ReactNode } from "react";
import { ThreadLink } from "@/components/shared/thread-link";
import { AgentText } from "@/components/ui/agent-text";

/** Threads an action did not go through on, each a link by its name followed by what happened, so the person can open it and act. */
export function ThreadOutcomes({ outcomes, className }: { outcomes: { key: string; name: string; said: ReactNode }[]; className: string }) {
  return (
    <ul className={className}>
      {outcomes.map((outcome) => (
        <li key={outcome.key}>
          <ThreadLink threadKey={outcome.key} className="text-link underline">
            <AgentText text={outcome.name} />
          </ThreadLink>
          : {outcome.said}
        </li>
      ))}
    </ul>
  );
}
