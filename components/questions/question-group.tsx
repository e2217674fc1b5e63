"use client";

import { ThreadLink } from "@/components/shared/thread-link";
import { useId, useRef, useState, type KeyboardEvent } from "react";
import type { RovingItem } from "@/lib/browser/use-roving-list";
import { sendJson } from "@/lib/browser/send-json";
import { AgentText } from "@/components/ui/agent-text";
import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { TextArea } from "@/components/ui/field";
import { When } from "@/components/ui/time";
import { visibleText } from "@/lib/contract/invisible";
import { sharedAnswerResultDto, type HumanStateDto } from "@/lib/human/dto";
import type { QuestionGroupDto } from "@/lib/views/questions/dto";

/** What a refused answer says when a thread moved on since the inbox was loaded (409). */
export const CONFLICT_MESSAGE = "Someone else acted on this, or the agent sent a newer packet. Nothing was written.";

const MAX_ANSWER = 4000;

interface QuestionGroupProps {
  group: QuestionGroupDto;
  /** When the shown data was made (ms): ages are measured from it. */
  now: number;
  /** The roving focus: only the current group is in the tab order. */
  roving: RovingItem;
  canAnswer: boolean;
  /** The answer was written into every thread's human section (`written`: each thread's new state, what Undo takes back). */
  onAnswered: (group: QuestionGroupDto, written: HumanStateDto[]) => void;
  /** A thread moved on: reload the inbox (resolves when the new targets are in). */
  onConflict: () => Promise<void>;
}

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`;

/**
 * One question of the inbox, asked by one thread or by several in the same
 * words: who asks it and why, and (for people who may act) the answer box and
 * the offered options. Every agent string is rendered as text.
 */
export function QuestionGroup({ group, now, roving, canAnswer, onAnswered, onConflict }: QuestionGroupProps) {
  const id = useId();
  const questionId = `${id}-question`;
  const articleElement = useRef<HTMLElement | null>(null);
  const textarea = useRef<HTMLTextAreaElement>(null);
  const [draft, setDraft] = useState("");
  const [pending, setPending] = useState(false);
  const [alert, setAlert] = useState<string | null>(null);
  // An answer for several threads waits for one confirmation that names how many.
  const [confirming, setConfirming] = useState<string | null>(null);
  const threads = group.items.length;

  const send = async (answer: string, confirmed = false) => {
    if (pending) return;
    const text = answer.trim();
    if (!text) {
      setAlert("Type an answer first.");
      return;
    }
    if (threads > 1 && !confirmed) {
      setAlert(null);
      setConfirming(text);
      return;
    }
    setConfirming(null);
    setPending(true);
    setAlert(null);
    const targets = group.items.map((item) => ({
      thread_key: item.thread_key,
      packet_id: item.packet_id,
      question_id: item.question_id,
      base_revision: item.base_revision,
    }));
    try {
      const result = await sendJson("POST", "/api/v1/answers", { answer: text, targets }, sharedAnswerResultDto);
      if (result.ok) {
        onAnswered(group, result.data.written);
        return;
      }
      if (result.status === 409 && result.code === "conflict") {
        setAlert(CONFLICT_MESSAGE);
        // The answer stays in the box; the refetched targets carry the new packet and revision.
        await onConflict().catch(() => undefined);
        return;
      }
      setAlert(result.message);
    } catch {
      setAlert("Baton's answer could not be read; reload the page to see whether the answer was written.");
    } finally {
      setPending(false);
    }
  };

  const onArticleKeyDown = (event: KeyboardEvent<HTMLElement>) => {
    if (event.key !== "Enter" || event.target !== event.currentTarget || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    if (!canAnswer) return;
    event.preventDefault();
    textarea.current?.focus();
  };

  const onTextareaKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.nativeEvent.isComposing) return;
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      void send(draft);
    } else if (event.key === "Escape") {
      event.preventDefault();
      articleElement.current?.focus();
    }
  };

  const sendName = threads > 1 ? `Send to ${threads} threads` : "Send";
  return (
    <div
      {...roving.attributes}
      ref={(element) => {
        articleElement.current = element;
        roving.attributes.ref(element);
      }}
      role="listitem"
      aria-labelledby={questionId}
      data-testid="question-group"
      data-group-key={group.key}
      onKeyDown={onArticleKeyDown}
      className={`rounded-lg border-l-4 bg-surface p-4 shadow-sm ring-1 ring-line outline-none focus-visible:ring-2 focus-visible:ring-focus ${
        roving.current ? "border-sky-500" : "border-transparent"
      }`}
    >
      <div className="flex flex-wrap items-center gap-x-3 gap-y-1 text-xs text-muted">
        {group.blocking ? <Badge className="bg-red-100 font-semibold text-red-800 uppercase dark:bg-red-950 dark:text-red-200">Blocking</Badge> : null}
        <span>asked by {plural(threads, "thread")}</span>
        {threads === 1 ? <When iso={group.items[0]!.received_at} written={group.items[0]!.asked_at} now={now} /> : <When iso={group.asked_at} now={now} />}
      </div>
      <h2 id={questionId} className="mt-1.5 text-lg leading-snug font-semibold break-words whitespace-pre-wrap">
        <AgentText text={group.question} multiline />
      </h2>
      <ul className="mt-2 space-y-1 text-sm" aria-label="Threads asking">
        {group.items.map((item) => (
          <li key={`${item.thread_key}\u0000${item.question_id}`} className="break-words">
            <ThreadLink threadKey={item.thread_key} className="font-mono text-link underline">
              <AgentText text={item.thread_key} />
            </ThreadLink>{" "}
            <span className="text-muted">
              · {item.agent ? <AgentText text={item.agent} /> : "unknown agent"}
            </span>
            {threads > 1 ? (
              <span className="text-xs text-muted">
                {" "}
                · <When iso={item.received_at} written={item.asked_at} now={now} />
              </span>
            ) : null}
            {item.context ? (
              <p className="mt-0.5 text-zinc-700 whitespace-pre-wrap dark:text-zinc-300">
                <AgentText text={item.context} multiline />
              </p>
            ) : null}
          </li>
        ))}
      </ul>
      {canAnswer ? (
        <form
          className="mt-3 space-y-2"
          aria-busy={pending}
          onSubmit={(event) => {
            event.preventDefault();
            void send(draft);
          }}
        >
          {group.options.length ? (
            <div role="group" aria-label="Offered answers" className="flex flex-wrap gap-2">
              {group.options.map((option) => (
                <Button key={option} variant="choice" disabled={pending} onClick={() => void send(option)}>
                  <AgentText text={option} />
                </Button>
              ))}
            </div>
          ) : null}
          <TextArea
            ref={textarea}
            aria-label={`Answer: ${visibleText(group.question)}`}
            value={draft}
            onChange={(event) => setDraft(event.target.value)}
            onKeyDown={onTextareaKeyDown}
            rows={2}
            maxLength={MAX_ANSWER}
            placeholder={threads > 1 ? `One answer for all ${threads} threads` : "Your answer"}
            className="block w-full"
          />
          <div className="flex flex-wrap items-center gap-3">
            <Button type="submit" variant="primary" aria-label={sendName} disabled={pending || !draft.trim()}>
              {sendName}
            </Button>
            <span className="text-xs text-muted">{pending ? "Sending…" : "Ctrl+Enter sends · Esc goes back to the list"}</span>
          </div>
          {confirming !== null ? (
            <div
              role="group"
              aria-label="Confirm the answer"
              className="flex flex-wrap items-center gap-2 rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-950 ring-1 ring-amber-200 dark:bg-amber-950 dark:text-amber-100 dark:ring-amber-900"
              onKeyDown={(event) => {
                if (event.key !== "Escape") return;
                event.preventDefault();
                event.stopPropagation();
                setConfirming(null);
                textarea.current?.focus();
              }}
            >
              <span className="min-w-0 break-words">
                Send &ldquo;<AgentText text={confirming} />&rdquo; to all {threads} threads?
              </span>
              <Button variant="primary" autoFocus onClick={() => void send(confirming, true)}>
                Yes, send to {threads} threads
              </Button>
              <Button
                variant="link"
                onClick={() => {
                  setConfirming(null);
                  textarea.current?.focus();
                }}
              >
                Cancel
              </Button>
            </div>
          ) : null}
          {alert ? <Alert>{alert}</Alert> : null}
        </form>
      ) : group.options.length ? (
        <p className="mt-2 text-sm text-muted">
          Offered answers: <AgentText text={group.options.join(" · ")} />
        </p>
      ) : null}
    </div>
  );
}
