"use client";

import { useState, type KeyboardEvent } from "react";
import { describeHumanSection } from "./human-state-line";
import { useHumanAction } from "./use-human-action";

interface AnswerFormProps {
  threadKey: string;
  packetId: string;
  revision: number;
  question: { id: string; question: string; options?: string[] };
}

const BUTTON = "rounded px-2 py-0.5 text-xs font-semibold ring-1 ring-zinc-400 hover:bg-zinc-100 focus-visible:outline-2 focus-visible:outline-sky-600 disabled:opacity-50 dark:hover:bg-zinc-800";

/** Answers one of the agent's questions on the thread page: an offered option in one click, or text (Ctrl+Enter sends). */
export function AnswerForm({ threadKey, packetId, revision, question }: AnswerFormProps) {
  const { status, send } = useHumanAction(threadKey, "answers");
  const [text, setText] = useState("");
  const [base, setBase] = useState<{ packetId: string; revision: number } | null>(null);
  const basedOn = base ?? { packetId, revision };
  const sending = status.state === "sending";

  async function submit(answer: string, on = basedOn) {
    if (!answer.trim()) return;
    setBase(on);
    const sent = await send({ packet_id: on.packetId, base_revision: on.revision, answers: [{ question_id: question.id, answer }] });
    if (sent) {
      setText("");
      setBase(null);
    }
  }

  function onKey(event: KeyboardEvent<HTMLTextAreaElement>) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      void submit(text);
    }
  }

  return (
    <div className="mt-1 space-y-1">
      {question.options?.length ? (
        <div className="flex flex-wrap gap-1.5" role="group" aria-label={`Options for: ${question.question}`}>
          {question.options.map((option) => (
            <button key={option} type="button" className={BUTTON} disabled={sending} onClick={() => void submit(option)}>
              {option}
            </button>
          ))}
        </div>
      ) : null}
      <div className="flex items-start gap-2">
        <textarea
          rows={2}
          value={text}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={onKey}
          disabled={sending}
          aria-label={`Answer: ${question.question}`}
          placeholder="Your answer (Ctrl+Enter sends)"
          className="min-w-0 flex-1 rounded border border-zinc-300 bg-white p-1.5 text-sm dark:border-zinc-700 dark:bg-zinc-950"
        />
        <button type="button" className={BUTTON} disabled={sending || !text.trim()} onClick={() => void submit(text)} aria-label={`Send answer: ${question.question}`}>
          Send
        </button>
      </div>
      {status.state === "error" ? (
        <p role="alert" className="text-xs text-red-700 dark:text-red-400">
          {status.message}
        </p>
      ) : null}
      {status.state === "conflict" ? (
        <div role="alert" className="space-y-1 rounded bg-amber-50 p-2 text-xs text-amber-900 dark:bg-amber-950 dark:text-amber-100">
          <p>{status.message}</p>
          {status.current ? (
            <>
              <p>Now: {describeHumanSection(status.current.human)}</p>
              <button
                type="button"
                className={BUTTON}
                onClick={() => void submit(text, { packetId: status.current!.packet_id, revision: status.current!.human.revision })}
              >
                Send again
              </button>
            </>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}
