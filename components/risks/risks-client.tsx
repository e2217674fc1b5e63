"use client";

import { isTextField } from "@/lib/browser/text-field";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useEffect, useEffectEvent, useMemo, useRef, useState } from "react";
import { sendJson } from "@/lib/browser/send-json";
import type { Severity } from "@/lib/packet/severity";
import { triageResultDto, type RiskGroupDto, type RiskListDto, type TriageRequestAction } from "@/lib/risks/dto";
import { RiskRow } from "./risk-row";
import { RiskFilters } from "./risk-filters";
import { SnoozeChoice } from "./snooze-choice";
import { useRisks } from "./use-risks";

const STEPS: Record<string, number> = { j: 1, ArrowDown: 1, k: -1, ArrowUp: -1 };


/** Elements whose Space already does something of their own. */
function ownsSpace(element: HTMLElement): boolean {
  return element.tagName === "BUTTON" || element.tagName === "A" || (element.tagName === "INPUT" && !isTextField(element));
}

interface Section {
  id: "regressed" | Severity;
  title: string;
  /** The list's accessible name. */
  label: string;
  rows: { group: RiskGroupDto; index: number }[];
}

const SEVERITY_TITLES: Record<Severity, string> = { critical: "Critical", high: "High", medium: "Medium", low: "Low", info: "Info" };

/** The list's order is the server's (regressed first, then by severity): cut into sections where the heading changes. */
function sectionsOf(groups: RiskGroupDto[]): Section[] {
  const sections: Section[] = [];
  for (const [index, group] of groups.entries()) {
    const id = group.regressed ? "regressed" : group.severity;
    let section = sections.at(-1);
    if (section?.id !== id) {
      section =
        id === "regressed"
          ? { id, title: "Regressed: back on top", label: "Regressed risks", rows: [] }
          : { id, title: SEVERITY_TITLES[id], label: `${SEVERITY_TITLES[id]} risks`, rows: [] };
      sections.push(section);
    }
    section.rows.push({ group, index });
  }
  return sections;
}

const DONE: Record<Exclude<TriageRequestAction, "untriaged">, string> = { acknowledged: "Acknowledged", resolved: "Resolved", snoozed: "Snoozed" };
const risksWord = (count: number) => `${count} risk${count === 1 ? "" : "s"}`;

/** The row that is current: remembered by fingerprint, and by position for when that row is gone. */
interface Current {
  fingerprint: string;
  index: number;
}

/**
 * The risks triage list: server-rendered first, then TanStack Query, refreshed
 * by the ledger stream. One row is current (roving focus): j/k or the arrows
 * move it, x or Space select it, and a / r / s acknowledge, resolve or snooze
 * the selection (or the current row when nothing is selected).
 */
export function RisksClient({ initialList, initialSearch, canAct }: { initialList: RiskListDto; initialSearch: string; canAct: boolean }) {
  const router = useRouter();
  const pathname = usePathname();
  const search = useSearchParams().toString();
  const { data: list, error, reload, live } = useRisks(search, { list: initialList, search: initialSearch });
  const groups = useMemo(() => list?.groups ?? [], [list]);
  const sections = useMemo(() => sectionsOf(groups), [groups]);
  // j/k walk the rows as they appear on screen, section by section.
  const ordered = useMemo(() => sections.flatMap((section) => section.rows.map((row) => row.group)), [sections]);
  const listRef = useRef<HTMLDivElement>(null);
  const emptyRef = useRef<HTMLParagraphElement>(null);
  const rows = useRef(new Map<string, HTMLElement>());
  const [current, setCurrent] = useState<Current | null>(null);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [snoozing, setSnoozing] = useState(false);
  const [pending, setPending] = useState(false);
  // Two quick key presses come before a re-render: the second must not send the action again.
  const inFlight = useRef(false);
  const [alert, setAlert] = useState<string | null>(null);
  const [announcement, setAnnouncement] = useState("");
  // Counts moves that must move the DOM focus (keyboard moves, a finished action); focus events only follow.
  const [focusRequest, setFocusRequest] = useState(0);

  const found = current ? ordered.findIndex((group) => group.fingerprint === current.fingerprint) : -1;
  // A current row triaged away gives way to the one now in its place.
  const currentIndex = ordered.length === 0 ? -1 : found >= 0 ? found : Math.min(current?.index ?? 0, ordered.length - 1);
  const currentGroup = ordered[currentIndex] ?? null;
  // Only rows still listed count as selected.
  const selection = ordered.filter((group) => selected.has(group.fingerprint));
  const acting = selection.length ? selection : currentGroup ? [currentGroup] : [];

  // Synchronises the DOM focus (outside React) with a requested move; focus events never request one.
  useEffect(() => {
    if (focusRequest === 0) return;
    if (currentGroup) rows.current.get(currentGroup.fingerprint)?.focus();
    else emptyRef.current?.focus();
    // eslint-disable-next-line react-hooks/exhaustive-deps -- runs per request, not when the focus moved the current row.
  }, [focusRequest]);

  const moveTo = (index: number) => {
    const group = ordered[index];
    if (!group) return;
    setCurrent({ fingerprint: group.fingerprint, index });
    setFocusRequest((count) => count + 1);
  };

  const toggle = (fingerprint: string) =>
    setSelected((before) => {
      const after = new Set(before);
      if (!after.delete(fingerprint)) after.add(fingerprint);
      return after;
    });

  const act = async (action: Exclude<TriageRequestAction, "untriaged">, snoozedUntil?: string | null) => {
    if (!canAct || inFlight.current || acting.length === 0) return;
    inFlight.current = true;
    const targets = acting.flatMap((group) => group.threads.map((thread) => ({ thread_key: thread.thread_key, fingerprint: group.fingerprint })));
    setPending(true);
    setAlert(null);
    try {
      const body = action === "snoozed" ? { action, targets, snoozed_until: snoozedUntil ?? null } : { action, targets };
      const result = await sendJson("POST", "/api/v1/risks/triage", body, triageResultDto);
      if (!result.ok) {
        setAlert(result.message);
        // A newer packet may have dropped a risk: show what is there now.
        if (result.status === 400) void reload();
        return;
      }
      setSelected(new Set());
      setSnoozing(false);
      setAnnouncement(`${DONE[action]} ${risksWord(acting.length)}.`);
      await reload();
      setFocusRequest((count) => count + 1);
    } catch {
      setAlert("Baton's answer could not be read; reload the page to see whether the risks were triaged.");
    } finally {
      inFlight.current = false;
      setPending(false);
    }
  };

  const closeSnooze = () => {
    setSnoozing(false);
    setFocusRequest((count) => count + 1);
  };

  // Moving (j/k) works wherever the focus is on the page (a fresh load leaves it on <body>); acting needs the focus in the list.
  const onKeyDown = (event: globalThis.KeyboardEvent) => {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target as HTMLElement;
    if (isTextField(target) || target.closest('[role="dialog"]')) return;
    const step = STEPS[event.key];
    if (step !== undefined) {
      if (currentIndex < 0) return;
      event.preventDefault();
      // The first press brings the focus to the current row; later ones move from it.
      const inList = listRef.current?.contains(target) ?? false;
      moveTo(inList ? Math.max(0, Math.min(ordered.length - 1, currentIndex + step)) : currentIndex);
      return;
    }
    // Keys that change data act only with the focus in the list: a stray key press elsewhere
    // on the page must not resolve the top risk (WCAG 2.1.4, character key shortcuts).
    if (!canAct || !currentGroup || !(listRef.current?.contains(target) ?? false)) return;
    if (event.key === "x" || (event.key === " " && !ownsSpace(target))) {
      event.preventDefault();
      toggle(currentGroup.fingerprint);
    } else if (event.key === "a") {
      event.preventDefault();
      void act("acknowledged");
    } else if (event.key === "r") {
      event.preventDefault();
      void act("resolved");
    } else if (event.key === "s") {
      event.preventDefault();
      setSnoozing(true);
    } else if (event.key === "Escape" && selected.size) {
      event.preventDefault();
      setSelected(new Set());
    }
  };
  const handleKey = useEffectEvent((event: globalThis.KeyboardEvent) => onKeyDown(event));
  // A listener on the document (outside React's tree), so that shortcuts work before anything has the focus.
  useEffect(() => {
    const listener = (event: globalThis.KeyboardEvent) => handleKey(event);
    document.addEventListener("keydown", listener);
    return () => document.removeEventListener("keydown", listener);
  }, []);

  const setFilters = (next: URLSearchParams) => {
    const query = next.toString();
    router.replace(query ? `${pathname}?${query}` : pathname, { scroll: false });
    setCurrent(null);
    setSelected(new Set());
  };

  // Ages are measured from when the server made the list, so server and browser render alike.
  const now = Date.parse((list ?? initialList).generated_at);
  const count = acting.length;
  const buttonClass =
    "rounded px-3 py-1 text-sm font-semibold focus-visible:ring-2 focus-visible:ring-sky-600 focus-visible:ring-offset-2 focus-visible:outline-none disabled:opacity-50";
  return (
    <div className="space-y-3">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <RiskFilters search={search} onChange={setFilters} />
        <p className="text-xs text-zinc-500">
          {list ? `${risksWord(groups.length)} · ` : "loading · "}
          {live === "open" ? "live" : live === "connecting" ? "connecting…" : "reconnecting…"}
        </p>
      </div>
      <p className="text-xs text-zinc-500">
        Regressed first, then by severity. j/k to move{canAct ? ", x or Space to select, a to acknowledge, r to resolve, s to snooze, Esc to clear the selection." : "."}
      </p>
      <p role="status" aria-live="polite" className="sr-only">
        {announcement}
      </p>
      {canAct ? (
        <div role="group" aria-label="Triage" className="sticky top-0 z-10 flex flex-wrap items-center gap-2 rounded-lg bg-zinc-100 p-2 dark:bg-zinc-900">
          <span className="text-sm text-zinc-700 dark:text-zinc-300" data-testid="triage-target">
            {selection.length ? `${selection.length} selected` : currentGroup ? "No selection: acting on the current row" : "Nothing to triage"}
          </span>
          <button type="button" aria-keyshortcuts="a" disabled={pending || count === 0} onClick={() => void act("acknowledged")} className={`${buttonClass} bg-emerald-700 text-white hover:bg-emerald-800`}>
            Acknowledge {count}
          </button>
          <button type="button" aria-keyshortcuts="r" disabled={pending || count === 0} onClick={() => void act("resolved")} className={`${buttonClass} bg-zinc-700 text-white hover:bg-zinc-800`}>
            Resolve {count}
          </button>
          <button
            type="button"
            aria-keyshortcuts="s"
            aria-expanded={snoozing}
            disabled={pending || count === 0}
            onClick={() => setSnoozing(true)}
            className={`${buttonClass} bg-violet-700 text-white hover:bg-violet-800`}
          >
            Snooze {count}…
          </button>
          {selection.length ? (
            <button type="button" onClick={() => setSelected(new Set())} className="rounded px-2 py-1 text-sm text-zinc-700 underline dark:text-zinc-300">
              Clear selection
            </button>
          ) : null}
          {pending ? <span className="text-xs text-zinc-500">Saving…</span> : null}
        </div>
      ) : (
        <p className="rounded bg-zinc-100 p-2 text-sm text-zinc-700 dark:bg-zinc-900 dark:text-zinc-300">
          You can read these risks; triaging them needs the operator or admin role.
        </p>
      )}
      {canAct && snoozing && count > 0 ? <SnoozeChoice what={risksWord(count)} pending={pending} onSnooze={(until) => void act("snoozed", until)} onCancel={closeSnooze} /> : null}
      {alert ? (
        <p role="alert" className="rounded bg-red-50 p-2 text-sm text-red-800 dark:bg-red-950 dark:text-red-200">
          {alert}
        </p>
      ) : null}
      {error ? (
        <p role="alert" className="rounded bg-red-50 p-2 text-sm text-red-800 dark:bg-red-950 dark:text-red-200">
          {error.message}
        </p>
      ) : null}
      {ordered.length === 0 ? (
        <p ref={emptyRef} tabIndex={-1} className="rounded-lg bg-white p-6 text-center text-zinc-600 ring-1 ring-zinc-200 outline-none dark:bg-zinc-900 dark:text-zinc-400 dark:ring-zinc-800">
          {list ? "No risks need triage here." : "Loading…"}
        </p>
      ) : (
        <div ref={listRef} className="space-y-5">
          {sections.map((section) => (
            <section key={section.id} aria-labelledby={`risks-${section.id}`} className="space-y-2">
              <h2 id={`risks-${section.id}`} className={`text-lg font-semibold ${section.id === "regressed" ? "text-red-700 dark:text-red-400" : ""}`}>
                {section.title} <span className="text-sm font-normal text-zinc-500">({section.rows.length})</span>
              </h2>
              <div role="list" aria-label={section.label} className="space-y-2">
                {section.rows.map(({ group }) => (
                  <RiskRow
                    key={group.fingerprint}
                    group={group}
                    now={now}
                    current={group.fingerprint === currentGroup?.fingerprint}
                    selected={selected.has(group.fingerprint)}
                    canAct={canAct}
                    rowRef={(element) => {
                      if (element) rows.current.set(group.fingerprint, element);
                      else rows.current.delete(group.fingerprint);
                    }}
                    onFocusRow={() => {
                      const index = ordered.indexOf(group);
                      if (current?.fingerprint !== group.fingerprint || current.index !== index) setCurrent({ fingerprint: group.fingerprint, index });
                    }}
                    onToggle={() => toggle(group.fingerprint)}
                  />
                ))}
              </div>
            </section>
          ))}
        </div>
      )}
      {list && list.hidden > 0 && list.view === "open" ? (
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          {risksWord(list.hidden)} resolved or snoozed not shown.{" "}
          <button
            type="button"
            onClick={() => {
              const next = new URLSearchParams(search);
              next.set("state", "all");
              setFilters(next);
            }}
            className="text-sky-700 underline dark:text-sky-400"
          >
            Show them
          </button>
        </p>
      ) : null}
    </div>
  );
}
