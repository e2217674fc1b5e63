"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useCallback, useRef, useState } from "react";
import { isTextField } from "@/lib/browser/text-field";
import { useDocumentKeys } from "@/lib/browser/use-document-keys";
import { describeLive } from "@/lib/browser/use-ledger-refresh";
import { useRovingList } from "@/lib/browser/use-roving-list";
import { sendJson } from "@/lib/browser/send-json";
import { answerUndoResultDto, type HumanStateDto } from "@/lib/human/dto";
import type { InboxDto, QuestionGroupDto } from "@/lib/views/questions/dto";
import { Alert, Note } from "@/components/ui/alert";
import { EmptyList } from "@/components/ui/empty-list";
import { QuestionGroup } from "./question-group";
import { UndoNotice, type UndoNoticeState } from "./undo-notice";
import { INBOX_QUERY_KEY, useInbox } from "./use-inbox";

/** One question of one thread: what an answer is written to. */
const targetId = (item: { thread_key: string; question_id: string }) => `${item.thread_key}\u0000${item.question_id}`;

/** The inbox with `answered`'s targets taken out (a thread that began asking the same question meanwhile still waits). */
function withoutAnswered(before: InboxDto, answered: QuestionGroupDto): InboxDto {
  const written = new Set(answered.items.map(targetId));
  let removed = 0;
  const groups = before.groups.flatMap((group) => {
    if (group.key !== answered.key) return [group];
    const items = group.items.filter((item) => !written.has(targetId(item)));
    removed += group.items.length - items.length;
    return items.length ? [{ ...group, items }] : [];
  });
  return { groups, total: Math.max(0, before.total - removed) };
}

/**
 * The questions inbox: server-rendered groups first, then TanStack Query,
 * refreshed by the ledger stream. One group is current (roving focus):
 * j/k or the arrows move it, Enter opens its answer box, Ctrl+Enter sends,
 * Esc comes back; once answered, the next group is current and focused, and the answer can be
 * taken back for a few seconds (Undo, or u).
 */
export function QuestionsInbox({ initialInbox, loadedAt, canAnswer }: { initialInbox: InboxDto; loadedAt: number; canAnswer: boolean }) {
  const queryClient = useQueryClient();
  const { data: inbox, error, dataUpdatedAt, reload, live } = useInbox(initialInbox, loadedAt);
  const groups = inbox.groups;
  const roving = useRovingList(groups.map((group) => group.key));
  const { listRef, emptyRef } = roving;
  const [announcement, setAnnouncement] = useState("");
  const [notice, setNotice] = useState<UndoNoticeState | null>(null);
  // What Undo sends: each thread's revision the answer wrote (the server undoes only those still current).
  const undoTargets = useRef<{ thread_key: string; packet_id: string; revision: number }[]>([]);
  const closeNotice = useCallback(() => setNotice(null), []);

  const undo = async () => {
    if (notice?.state !== "offer") return;
    const { id, threads } = notice;
    setNotice({ state: "sending", id, threads });
    try {
      const result = await sendJson("POST", "/api/v1/answers/undo", { targets: undoTargets.current }, answerUndoResultDto);
      if (!result.ok) {
        setNotice({ state: "done", id, undone: 0, movedOn: [], error: result.message });
        return;
      }
      const movedOn = result.data.results.filter((entry) => entry.outcome === "conflict").map((entry) => entry.thread_key);
      setNotice({ state: "done", id, undone: result.data.results.length - movedOn.length, movedOn });
    } catch {
      setNotice({ state: "done", id, undone: 0, movedOn: [], error: "Baton's answer could not be read; reload the page to see what was taken back." });
    }
    void reload();
  };

  const onAnswered = async (answered: QuestionGroupDto, written: HumanStateDto[]) => {
    undoTargets.current = written.map((state) => ({ thread_key: state.thread_key, packet_id: state.packet_id, revision: state.human.revision }));
    setNotice((previous) => ({ state: "offer", id: (previous?.id ?? 0) + 1, answer: written[0]?.human.answers.at(-1)?.answer ?? "", threads: written.length }));
    // Gone at once (a fetch begun before the write is dropped), then confirmed by a refetch.
    await queryClient.cancelQueries({ queryKey: INBOX_QUERY_KEY });
    const before = queryClient.getQueryData<InboxDto>(INBOX_QUERY_KEY) ?? inbox;
    const index = before.groups.findIndex((group) => group.key === answered.key);
    const after = withoutAnswered(before, answered);
    queryClient.setQueryData<InboxDto>(INBOX_QUERY_KEY, after);
    const nextIndex = Math.min(Math.max(index, 0), after.groups.length - 1);
    roving.place(after.groups[nextIndex]?.key ?? null, nextIndex, true);
    setAnnouncement(answered.items.length > 1 ? `Answer sent to ${answered.items.length} threads.` : "Answer sent.");
    void reload();
  };

  // j/k work wherever the focus is on the page (a fresh load leaves it on <body>), except in text fields.
  useDocumentKeys((event) => {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target as HTMLElement;
    if (isTextField(target)) return;
    if (event.key === "u" && notice?.state === "offer") {
      event.preventDefault();
      void undo();
      return;
    }
    if (roving.step(event)) return;
    if (event.key === "Enter" && canAnswer && roving.currentKey && (target === document.body || target === document.documentElement)) {
      event.preventDefault();
      roving.itemElement(roving.currentKey)?.querySelector("textarea")?.focus();
    }
  });

  return (
    <div className="space-y-3">
      <div className="flex flex-wrap items-center justify-between gap-3 text-xs text-muted">
        <p>
          Blocking first, then oldest.
          {canAnswer ? " j/k to move, Enter to answer, Ctrl+Enter to send, Esc to go back." : " j/k to move."}
        </p>
        <p>{describeLive(live)}</p>
      </div>
      <p role="status" aria-live="polite" className="sr-only">
        {announcement}
      </p>
      {notice ? <UndoNotice notice={notice} onUndo={() => void undo()} onClose={closeNotice} /> : null}
      {canAnswer ? null : <Note>You can read these questions; answering them needs the operator or admin role.</Note>}
      {error ? <Alert>{error.message}</Alert> : null}
      {groups.length === 0 ? (
        <EmptyList ref={emptyRef}>No unanswered questions.</EmptyList>
      ) : (
        <div ref={listRef} role="list" aria-label="Unanswered questions" className="space-y-3">
          {groups.map((group) => (
            <QuestionGroup
              key={group.key}
              group={group}
              now={dataUpdatedAt}
              roving={roving.item(group.key)}
              canAnswer={canAnswer}
              onAnswered={(answered, written) => void onAnswered(answered, written)}
              onConflict={reload}
            />
          ))}
        </div>
      )}
    </div>
  );
}
