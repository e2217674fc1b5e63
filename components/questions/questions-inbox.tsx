"use client";

import { useThrottledRefresh } from "@/lib/live/use-throttled-refresh";
import { isTextField } from "@/lib/browser/text-field";
import { useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useEffectEvent, useRef, useState } from "react";
import type { InboxDto, QuestionGroupDto } from "@/lib/human/inbox-dto";
import { useLedgerStream } from "@/lib/live/use-ledger-stream";
import { QuestionGroup } from "./question-group";
import { INBOX_QUERY_KEY, useInbox } from "./use-inbox";


const STEPS: Record<string, number> = { j: 1, ArrowDown: 1, k: -1, ArrowUp: -1 };


/** One question of one thread: what an answer is written to. */
const targetId = (item: { thread_key: string; question_id: string }) => `${item.thread_key}\u0000${item.question_id}`;

/** The group that is current: remembered by key, and by position for when that group is gone. */
interface Current {
  key: string;
  index: number;
}

/**
 * The questions inbox: server-rendered groups first, then TanStack Query,
 * refreshed by the ledger stream. One group is current (roving focus):
 * j/k or the arrows move it, Enter opens its answer box, Ctrl+Enter sends,
 * Esc comes back; once answered, the next group is current and focused.
 */
export function QuestionsInbox({ initialInbox, loadedAt, canAnswer }: { initialInbox: InboxDto; loadedAt: number; canAnswer: boolean }) {
  const queryClient = useQueryClient();
  const { data: inbox, error, dataUpdatedAt } = useInbox(initialInbox, loadedAt);
  const groups = inbox.groups;
  const listRef = useRef<HTMLDivElement>(null);
  const emptyRef = useRef<HTMLParagraphElement>(null);
  const articles = useRef(new Map<string, HTMLElement>());
  const [current, setCurrent] = useState<Current | null>(null);
  // Counts moves that must move the DOM focus (keyboard moves, an answered group); focus events only follow.
  const [focusRequest, setFocusRequest] = useState(0);
  const [announcement, setAnnouncement] = useState("");

  // A fetch already under way may have started before the event: invalidating cancels and restarts it.
  const reload = useCallback(() => queryClient.invalidateQueries({ queryKey: INBOX_QUERY_KEY }), [queryClient]);
  const refresh = useThrottledRefresh(useCallback(() => void reload(), [reload]));
  const live = useLedgerStream({ url: "/api/v1/stream", onEvents: refresh, onReset: refresh });

  const found = current ? groups.findIndex((group) => group.key === current.key) : -1;
  // A current group answered elsewhere gives way to the one now in its place.
  const currentIndex = groups.length === 0 ? -1 : found >= 0 ? found : Math.min(current?.index ?? 0, groups.length - 1);
  const currentKey = groups[currentIndex]?.key ?? null;

  // Synchronises the DOM focus (outside React) with a requested move; focus events never request one.
  useEffect(() => {
    if (focusRequest === 0) return;
    if (currentKey) articles.current.get(currentKey)?.focus();
    else emptyRef.current?.focus();
    // eslint-disable-next-line react-hooks/exhaustive-deps -- runs per request, not when the focus moved the current group.
  }, [focusRequest]);

  const moveTo = (index: number) => {
    const group = groups[index];
    if (!group) return;
    setCurrent({ key: group.key, index });
    setFocusRequest((count) => count + 1);
  };

  const onAnswered = async (answered: QuestionGroupDto) => {
    // Gone at once (a fetch begun before the write is dropped), then confirmed by a refetch.
    await queryClient.cancelQueries({ queryKey: INBOX_QUERY_KEY });
    const written = new Set(answered.items.map(targetId));
    const before = queryClient.getQueryData<InboxDto>(INBOX_QUERY_KEY) ?? inbox;
    const index = before.groups.findIndex((group) => group.key === answered.key);
    let removed = 0;
    const groupsLeft = before.groups.flatMap((group) => {
      if (group.key !== answered.key) return [group];
      // A thread that began asking the same question meanwhile still waits for its answer.
      const items = group.items.filter((item) => !written.has(targetId(item)));
      removed += group.items.length - items.length;
      return items.length ? [{ ...group, items }] : [];
    });
    const after: InboxDto = { groups: groupsLeft, total: Math.max(0, before.total - removed) };
    queryClient.setQueryData<InboxDto>(INBOX_QUERY_KEY, after);
    const nextIndex = Math.min(Math.max(index, 0), after.groups.length - 1);
    const next = after.groups[nextIndex];
    setCurrent(next ? { key: next.key, index: nextIndex } : null);
    setFocusRequest((count) => count + 1);
    setAnnouncement(answered.items.length > 1 ? `Answer sent to ${answered.items.length} threads.` : "Answer sent.");
    void reload();
  };

  // j/k work wherever the focus is on the page (a fresh load leaves it on <body>), except in text fields.
  const onKeyDown = (event: globalThis.KeyboardEvent) => {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target as HTMLElement;
    if (isTextField(target)) return;
    const step = STEPS[event.key];
    if (step !== undefined) {
      if (currentIndex < 0) return;
      event.preventDefault();
      // The first press brings the focus to the current group; later ones move from it.
      const inList = listRef.current?.contains(target) ?? false;
      moveTo(inList ? Math.max(0, Math.min(groups.length - 1, currentIndex + step)) : currentIndex);
      return;
    }
    if (event.key === "Enter" && canAnswer && currentKey && (target === document.body || target === document.documentElement)) {
      event.preventDefault();
      articles.current.get(currentKey)?.querySelector("textarea")?.focus();
    }
  };
  const handleKey = useEffectEvent((event: globalThis.KeyboardEvent) => onKeyDown(event));
  useEffect(() => {
    const listener = (event: globalThis.KeyboardEvent) => handleKey(event);
    document.addEventListener("keydown", listener);
    return () => document.removeEventListener("keydown", listener);
  }, []);

  return (
    <div className="space-y-3">
      <div className="flex flex-wrap items-center justify-between gap-3 text-xs text-zinc-500">
        <p>
          Blocking first, then oldest.
          {canAnswer ? " j/k to move, Enter to answer, Ctrl+Enter to send, Esc to go back." : " j/k to move."}
        </p>
        <p>{live === "open" ? "live" : live === "connecting" ? "connecting…" : "reconnecting…"}</p>
      </div>
      <p role="status" aria-live="polite" className="sr-only">
        {announcement}
      </p>
      {canAnswer ? null : (
        <p className="rounded bg-zinc-100 p-2 text-sm text-zinc-700 dark:bg-zinc-900 dark:text-zinc-300">
          You can read these questions; answering them needs the operator or admin role.
        </p>
      )}
      {error ? (
        <p role="alert" className="rounded bg-red-50 p-2 text-sm text-red-800 dark:bg-red-950 dark:text-red-200">
          {error.message}
        </p>
      ) : null}
      {groups.length === 0 ? (
        <p ref={emptyRef} tabIndex={-1} className="rounded-lg bg-white p-6 text-center text-zinc-600 outline-none ring-1 ring-zinc-200 dark:bg-zinc-900 dark:text-zinc-400 dark:ring-zinc-800">
          No unanswered questions.
        </p>
      ) : (
        <div ref={listRef} role="list" aria-label="Unanswered questions" className="space-y-3">
          {groups.map((group, index) => (
            <QuestionGroup
              key={group.key}
              group={group}
              now={dataUpdatedAt}
              current={index === currentIndex}
              canAnswer={canAnswer}
              articleRef={(element) => {
                if (element) articles.current.set(group.key, element);
                else articles.current.delete(group.key);
              }}
              onFocusGroup={() => {
                if (current?.key !== group.key || current.index !== index) setCurrent({ key: group.key, index });
              }}
              onAnswered={(answered) => void onAnswered(answered)}
              onConflict={reload}
            />
          ))}
        </div>
      )}
    </div>
  );
}
