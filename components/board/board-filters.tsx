"use client";

import { forwardRef, useCallback, useEffect, useRef, useState } from "react";
import { FLAG_CODES, FLAG_TITLES } from "@/lib/packet/lint";
import { SEVERITIES } from "@/lib/packet/severity";

export interface BoardFilterValues {
  q: string;
  agent: string;
  project: string;
  branch: string;
  severity: string;
  flag: string;
}

export const FILTER_KEYS = ["q", "agent", "project", "branch", "severity", "flag"] as const;

interface BoardFiltersProps {
  values: BoardFilterValues;
  onChange: (values: BoardFilterValues) => void;
}

const TEXT_DEBOUNCE_MS = 250;
const serialise = (values: BoardFilterValues) => JSON.stringify(FILTER_KEYS.map((key) => values[key]));
const inputClass =
  "rounded-md border border-zinc-300 bg-white px-2 py-1 text-sm dark:border-zinc-700 dark:bg-zinc-900 focus-visible:outline-2 focus-visible:outline-sky-600";

/** The board's filters; every value lives in the URL so that a view can be shared. */
export const BoardFilters = forwardRef<HTMLInputElement, BoardFiltersProps>(function BoardFilters({ values, onChange }, searchRef) {
  const [draft, setDraft] = useState(values);
  // Values sent to the URL that have not landed yet. A navigation lands a moment after it is
  // sent: the person may have typed on meanwhile, and their newer text must not be undone.
  const pending = useRef<string[]>([]);
  const send = useCallback((next: BoardFilterValues) => {
    pending.current.push(serialise(next));
    onChange(next);
  }, [onChange]);
  // A select applies at once; the draft takes its value too, or the debounce below would see
  // the draft differ from the URL and send the old choice back.
  const choose = (key: "severity" | "flag", value: string) => {
    const next = { ...draft, [key]: value };
    setDraft(next);
    send(next);
  };
  // Keeps the inputs in step when the URL changes from outside (back button, a shared link).
  useEffect(() => {
    const landed = pending.current.indexOf(serialise(values));
    if (landed >= 0) {
      pending.current.splice(0, landed + 1);
      return;
    }
    pending.current = [];
    setDraft(values);
  }, [values]);
  // Debounces typing before the URL (and the query) changes: a timer, outside React.
  useEffect(() => {
    const target = pending.current.at(-1) ?? serialise(values);
    if (serialise(draft) === target) return;
    const timer = setTimeout(() => send(draft), TEXT_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [draft, values, send]);

  const text = (key: "q" | "agent" | "project" | "branch", label: string, ref?: typeof searchRef) => (
    <label className="flex flex-col text-xs text-zinc-600 dark:text-zinc-400">
      {label}
      <input
        ref={ref}
        type="search"
        value={draft[key]}
        onChange={(event) => setDraft({ ...draft, [key]: event.target.value })}
        className={inputClass}
        aria-keyshortcuts={key === "q" ? "/" : undefined}
      />
    </label>
  );
  return (
    <form role="search" aria-label="Filter the board" className="flex flex-wrap items-end gap-2" onSubmit={(event) => event.preventDefault()}>
      {text("q", "Search (/)", searchRef)}
      {text("agent", "Agent")}
      {text("project", "Project")}
      {text("branch", "Branch")}
      <label className="flex flex-col text-xs text-zinc-600 dark:text-zinc-400">
        Severity
        <select className={inputClass} value={values.severity} onChange={(event) => choose("severity", event.target.value)}>
          <option value="">any</option>
          {SEVERITIES.map((severity) => (
            <option key={severity} value={severity}>
              {severity}
            </option>
          ))}
        </select>
      </label>
      <label className="flex flex-col text-xs text-zinc-600 dark:text-zinc-400">
        Flag
        <select className={inputClass} value={values.flag} onChange={(event) => choose("flag", event.target.value)}>
          <option value="">any</option>
          {FLAG_CODES.map((code) => (
            <option key={code} value={code}>
              {FLAG_TITLES[code]}
            </option>
          ))}
        </select>
      </label>
    </form>
  );
});
