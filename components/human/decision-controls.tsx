"use client";

import { useRef, useState, type KeyboardEvent } from "react";
import type { HumanDecision } from "@/lib/human/section";
import type { HumanStateDto } from "@/lib/human/dto";
import { AgentText } from "@/components/ui/agent-text";
import { Button } from "@/components/ui/button";
import { TextArea } from "@/components/ui/field";
import { ActionStatusAlert } from "./action-status";
import { useHumanAction } from "./use-human-action";

interface DecisionControlsProps {
  threadKey: string;
  /** What the person is looking at: the write is refused (409) if either moved on. */
  packetId: string;
  revision: number;
  decision: HumanDecision | null;
  /** Names the thread in the buttons' accessible names ("Approve <name>"). */
  name: string;
  /** -1 keeps the buttons out of the Tab order (cards that do not have the board's focus). */
  tabIndex?: number;
  /** Words the instruction may quote (the failing check, the review's comment), one button each. */
  quotes?: readonly string[];
  /** Called when the write was refused because someone or something got there first. */
  onConflict?: (current: HumanStateDto | null) => void;
}


/**
 * Approve (one click) and intervene (a text field in place, Enter sends),
 * on a card and on the thread page. After a conflict the person sees the
 * current state and can send the same action again, based on it.
 */
export function DecisionControls({ threadKey, packetId, revision, decision, name, tabIndex, quotes = [], onConflict }: DecisionControlsProps) {
  const { status, send, reset } = useHumanAction(threadKey, "decision", onConflict);
  const [intervening, setIntervening] = useState(false);
  const interveneButton = useRef<HTMLButtonElement>(null);
  const [instruction, setInstruction] = useState("");
  const [base, setBase] = useState<{ packetId: string; revision: number } | null>(null);
  // A conflict's current state replaces the props' until the page refreshes with it.
  const basedOn = base ?? { packetId, revision };
  const sending = status.state === "sending";

  async function approve() {
    if (await send({ kind: "approved", packet_id: basedOn.packetId, base_revision: basedOn.revision })) setBase(null);
  }

  async function intervene() {
    const question = instruction.trim();
    if (!question) return;
    const sent = await send({ kind: "intervened", question, packet_id: basedOn.packetId, base_revision: basedOn.revision });
    if (sent) {
      setInstruction("");
      setIntervening(false);
      setBase(null);
    }
  }

  function onInstructionKey(event: KeyboardEvent<HTMLTextAreaElement>) {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      void intervene();
    } else if (event.key === "Escape") {
      event.preventDefault();
      setIntervening(false);
      reset();
      // Back where the person opened the field from, not lost on <body>.
      interveneButton.current?.focus();
    }
  }

  return (
    <div className="space-y-1.5" onClick={(event) => event.stopPropagation()}>
      <div className="flex flex-wrap items-center gap-2">
        {decision ? (
          <span className="text-xs text-muted">
            {decision.kind} by <AgentText text={decision.by} />
          </span>
        ) : null}
        <Button
          variant="small"
          tabIndex={tabIndex}
          disabled={sending || decision?.kind === "approved"}
          onClick={() => void approve()}
          aria-label={`Approve ${name}`}
          className="text-emerald-800 ring-emerald-600 hover:bg-emerald-50 dark:text-emerald-300 dark:hover:bg-emerald-950"
        >
          Approve
        </Button>
        <Button
          variant="small"
          tabIndex={tabIndex}
          disabled={sending}
          ref={interveneButton}
          aria-expanded={intervening}
          onClick={() => setIntervening((open) => !open)}
          aria-label={`Intervene on ${name}`}
          className="text-amber-800 ring-amber-600 hover:bg-amber-50 dark:text-amber-300 dark:hover:bg-amber-950"
        >
          Intervene
        </Button>
      </div>
      {intervening ? (
        <TextArea
          autoFocus
          rows={2}
          value={instruction}
          onChange={(event) => setInstruction(event.target.value)}
          onKeyDown={onInstructionKey}
          disabled={sending}
          aria-label={`Instructions for the next session of ${name} (Enter sends, Shift+Enter for a new line)`}
          placeholder="What must the next session do first? Enter sends."
          className="w-full"
        />
      ) : null}
      {intervening && quotes.length ? (
        <div className="flex flex-wrap items-center gap-1.5 text-xs">
          <span className="text-muted">Quote:</span>
          {quotes.map((quote, index) => (
            <Button key={index} variant="choice" disabled={sending} onClick={() => setInstruction((text) => (text.trim() ? `${text.trimEnd()}\n${quote}` : quote))} aria-label={`Quote in the instruction: ${quote}`} className="max-w-full text-left text-xs">
              <AgentText className="line-clamp-1" text={quote} />
            </Button>
          ))}
        </div>
      ) : null}
      <ActionStatusAlert
        status={status}
        packetId={packetId}
        actLabel="Act on the current state"
        actClassName="ring-amber-700"
        onAct={(current) => {
          setBase({ packetId: current.packet_id, revision: current.human.revision });
          reset();
        }}
      />
    </div>
  );
}
