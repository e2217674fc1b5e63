"use client";

import { useEffect, useRef } from "react";
import { Button } from "@/components/ui/button";
import { AgentText } from "@/components/ui/agent-text";

/** How long an answer can be taken back from the inbox (the server checks nothing moved on, not the time). */
export const UNDO_WINDOW_MS = 8_000;

export type UndoNoticeState =
  | { state: "offer"; id: number; answer: string; threads: number }
  | { state: "sending"; id: number; threads: number }
  | { state: "done"; id: number; undone: number; movedOn: string[]; error?: string };

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`;

/**
 * "Answered 7 threads · Undo" for a few seconds after an answer; then what the undo did, thread
 * by thread when some had moved on. Focus or the pointer inside it holds it open.
 */
export function UndoNotice({ notice, onUndo, onClose }: { notice: UndoNoticeState; onUndo: () => void; onClose: () => void }) {
  const box = useRef<HTMLDivElement>(null);
  const held = useRef(false);
  // A timer (outside React) closes the offer, unless the person is on it; a result stays until dismissed.
  useEffect(() => {
    if (notice.state !== "offer") return;
    const timer = setInterval(() => {
      if (!held.current) onClose();
    }, UNDO_WINDOW_MS);
    return () => clearInterval(timer);
  }, [notice.state, notice.id, onClose]);
  return (
    <div
      ref={box}
      role="status"
      data-testid="undo-notice"
      onFocus={() => {
        held.current = true;
      }}
      onBlur={(event) => {
        if (!box.current?.contains(event.relatedTarget as Node | null)) held.current = false;
      }}
      onMouseEnter={() => {
        held.current = true;
      }}
      onMouseLeave={() => {
        held.current = Boolean(box.current?.contains(document.activeElement));
      }}
      className="sticky top-0 z-20 flex flex-wrap items-center gap-x-3 gap-y-1 rounded-md bg-surface px-3 py-2 text-sm text-fg shadow-lg ring-1 ring-line-strong"
    >
      {notice.state === "offer" ? (
        <>
          <span className="min-w-0 break-words">
            Answered {plural(notice.threads, "thread")}: &ldquo;<AgentText text={notice.answer} />&rdquo;
          </span>
          <Button variant="primary" onClick={onUndo}>
            Undo
          </Button>
          <span className="text-xs text-muted">or press u</span>
        </>
      ) : notice.state === "sending" ? (
        <span>Taking the answer back from {plural(notice.threads, "thread")}…</span>
      ) : (
        <>
          <span className="min-w-0 break-words">
            {notice.error
              ? `The answer was not taken back: ${notice.error}`
              : `Answer taken back from ${plural(notice.undone, "thread")}${notice.movedOn.length ? `; ${plural(notice.movedOn.length, "thread")} had moved on and kept it:` : "."}`}
            {notice.movedOn.length ? (
              <>
                {" "}
                <AgentText text={notice.movedOn.join(", ")} />
              </>
            ) : null}
          </span>
          <Button variant="link" onClick={onClose}>
            Dismiss
          </Button>
        </>
      )}
    </div>
  );
}
