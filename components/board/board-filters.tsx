"use client";

import { forwardRef, useEffect, useState } from "react";
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
const inputClass =
  "rounded-md border border-zinc-300 bg-white px-2 py-1 text-sm dark:border-zinc-700 dark:bg-zinc-900 focus-visible:outline-2 focus-visible:outline-sky-600";

/** The board's filters; every value lives in the URL so that a view can be shared. */
export const BoardFilters = forwardRef<HTMLInputElement, BoardFiltersProps>(function BoardFilters({ values, onChange }, searchRef) {
  const [draft, setDraft] = useState(values);
  // Keeps the inputs in step when the URL changes from outside (back button, a shared link).
  useEffect(() => setDraft(values), [values]);
  // Debounces typing before the URL (and the query) changes: a timer, outside React.
  useEffect(() => {
    const changed = (["q", "agent", "project", "branch"] as const).some((key) => draft[key] !== values[key]);
    if (!changed) return;
    const timer = setTimeout(() => onChange(draft), TEXT_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [draft, values, onChange]);

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
        <select className={inputClass} value={values.severity} onChange={(event) => onChange({ ...draft, severity: event.target.value })}>
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
        <select className={inputClass} value={values.flag} onChange={(event) => onChange({ ...draft, flag: event.target.value })}>
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
