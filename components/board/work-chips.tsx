"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState, type ReactNode } from "react";
import { z } from "zod";
import { AgentText } from "@/components/ui/agent-text";
import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { sendJson } from "@/lib/browser/send-json";
import { visibleText } from "@/lib/contract/invisible";
import type { ThreadWorkDto } from "@/lib/integrations/dto";

/** Only http(s) links from a code host are followed: a `javascript:` URL in a payload stays text. */
const safeUrl = (url: string | null) => (url && /^https?:\/\//i.test(url) ? url : null);

const TONE = {
  good: "text-success ring-emerald-600/40",
  bad: "font-semibold text-danger ring-red-600/50",
  pending: "text-warning ring-amber-600/50",
  neutral: "text-muted ring-line",
} as const;
type Tone = keyof typeof TONE;

function Chip({ tone, url, label, title, children }: { tone: Tone; url: string | null; label: string; title?: string; children: ReactNode }) {
  const className = `inline-flex min-h-6 items-center gap-1 rounded-full bg-surface px-2 py-0.5 text-xs ring-1 ${TONE[tone]}`;
  const href = safeUrl(url);
  return (
    <li title={title ? visibleText(title) : undefined}>
      {href ? (
        <a href={href} target="_blank" rel="noopener noreferrer" aria-label={label} className={`${className} underline-offset-2 hover:underline focus-visible:outline-2 focus-visible:outline-focus`}>
          {children}
        </a>
      ) : (
        <span className={className}>{children}</span>
      )}
    </li>
  );
}

const PR_TONE = { open: "neutral", draft: "neutral", merged: "good", closed: "neutral" } as const;
const CI_TONE = { passing: "good", failing: "bad", running: "pending" } as const;

/** The code host's pull request, CI and review for the thread's branch, with a one-click archive once merged. */
export function WorkChips({ work, threadKey, name, canAct, tabIndex }: { work: ThreadWorkDto | null; threadKey: string; name: string; canAct: boolean; tabIndex?: number }) {
  if (!work) return null;
  const { pull_request: pr, ci, review } = work;
  return (
    <div className="flex flex-wrap items-center gap-1.5" data-testid="work-chips">
      <ul aria-label="Pull request, CI and review" className="flex flex-wrap gap-1.5">
        {pr ? (
          <Chip tone={PR_TONE[pr.state]} url={pr.url} label={`Pull request ${pr.number}, ${pr.state} (opens the code host)`} title={pr.title ?? undefined}>
            PR #{pr.number} · {pr.state}
          </Chip>
        ) : null}
        {ci ? (
          <Chip tone={CI_TONE[ci.state]} url={ci.url} label={`CI ${ci.state}${ci.check ? `: ${visibleText(ci.check)}` : ""} (opens the check)`}>
            CI {ci.state}
            {ci.check ? (
              <>
                : <AgentText className="max-w-48 truncate" text={ci.check} />
              </>
            ) : null}
          </Chip>
        ) : null}
        {review ? (
          <Chip tone={review.state === "approved" ? "good" : "bad"} url={review.url} label={`Review: ${review.state.replace("_", " ")} by ${visibleText(review.reviewer)}`} title={review.comment ?? undefined}>
            {review.state === "approved" ? "Approved" : "Changes requested"} by <AgentText text={review.reviewer} />
          </Chip>
        ) : null}
      </ul>
      {pr?.state === "merged" && canAct ? <ArchiveButton threadKey={threadKey} name={name} number={pr.number} tabIndex={tabIndex} /> : null}
    </div>
  );
}

function ArchiveButton({ threadKey, name, number, tabIndex }: { threadKey: string; name: string; number: number; tabIndex?: number }) {
  const queryClient = useQueryClient();
  const router = useRouter();
  const [state, setState] = useState<{ sending: boolean; error: string | null }>({ sending: false, error: null });

  async function archive() {
    setState({ sending: true, error: null });
    const result = await sendJson("POST", `/api/v1/threads/${encodeURIComponent(threadKey)}/archive`, { reason: `pull request #${number} was merged` }, z.object({ archived: z.boolean() }));
    if (!result.ok) {
      setState({ sending: false, error: result.message });
      return;
    }
    void queryClient.invalidateQueries({ queryKey: ["board"] });
    router.refresh();
  }

  return (
    <>
      <Button variant="small" tabIndex={tabIndex} disabled={state.sending} onClick={() => void archive()} aria-label={`Archive ${name}: its pull request was merged`} className="text-success ring-emerald-600">
        Archive
      </Button>
      {state.error ? <Alert size="compact">{state.error}</Alert> : null}
    </>
  );
}
