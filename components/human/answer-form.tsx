"use client";

import { useState, type KeyboardEvent } from "react";
import { AgentText } from "@/components/ui/agent-text";
import { Button } from "@/components/ui/button";
import { TextArea } from "@/components/ui/field";
import { visibleText } from "@/lib/contract/invisible";
import { ActionStatusAlert } from "./action-status";
import { useHumanAction } from "./use-human-action";

interface AnswerFormProps {
  threadKey: string;
  packetId: string;
  revision: number;
  question: { id: string; question: string; options?: string[] };
}

const OUTLINE = "ring-zinc-400 hover:bg-zinc-100 dark:hover:bg-zinc-800";

/** Answers one of the agent's questions on the thread page: an offered option in one click, or text (Ctrl+Enter sends). */
export function AnswerForm({ threadKey, packetId, revision, question }: AnswerFormProps) {
  const { status, send } = useHumanAction(threadKey, "answers");
  const [text, setText] = useState("");
  const [base, setBase] = useState<{ packetId: string; revision: number } | null>(null);
  const basedOn = base ?? { packetId, revision };
  const sending = status.state === "sending";
  const asked = visibleText(question.question);

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
        <div className="flex flex-wrap gap-1.5" role="group" aria-label={`Options for: ${asked}`}>
          {question.options.map((option) => (
            <Button key={option} variant="small" className={OUTLINE} disabled={sending} onClick={() => void submit(option)}>
              <AgentText text={option} />
            </Button>
          ))}
        </div>
      ) : null}
      <div className="flex items-start gap-2">
        <TextArea
          rows={2}
          value={text}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={onKey}
          disabled={sending}
          aria-label={`Answer: ${asked}`}
          placeholder="Your answer (Ctrl+Enter sends)"
          className="min-w-0 flex-1"
        />
        <Button variant="small" className={OUTLINE} disabled={sending || !text.trim()} onClick={() => void submit(text)} aria-label={`Send answer: ${asked}`}>
          Send
        </Button>
      </div>
      <ActionStatusAlert
        status={status}
        actLabel="Send again"
        actClassName={OUTLINE}
        onAct={(current) => void submit(text, { packetId: current.packet_id, revision: current.human.revision })}
      />
    </div>
  );
}
