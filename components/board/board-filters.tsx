"use client";

import { forwardRef, useCallback, useEffect, useRef, useState } from "react";
import { FLAG_CODES, FLAG_TITLES } from "@/lib/contract/lint";
import { SEVERITIES } from "@/lib/contract/severity";
import { Button } from "@/components/ui/button";
import { ChoiceSelect, Field, Input } from "@/components/ui/field";

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
// "" first: no filter.
const ANY = { "": "any" } as const;
const SEVERITY_CHOICES = ["", ...SEVERITIES] as const;
const FLAG_CHOICES = ["", ...FLAG_CODES] as const;
const FLAG_LABELS = { ...ANY, ...FLAG_TITLES };
const serialise = (values: BoardFilterValues) => JSON.stringify(FILTER_KEYS.map((key) => values[key]));

/** The board's filters; every value lives in the URL so that a view can be shared. */
export const BoardFilters = forwardRef<HTMLInputElement, BoardFiltersProps>(function BoardFilters({ values, onChange }, searchRef) {
  const [draft, setDraft] = useState(values);
  // On a phone the filters other than Search sit behind one button; wider screens always show them.
  const [open, setOpen] = useState(false);
  const active = FILTER_KEYS.filter((key) => key !== "q" && values[key]).length;
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
    <Field label={label}>
      <Input
        ref={ref}
        type="search"
        value={draft[key]}
        onChange={(event) => setDraft({ ...draft, [key]: event.target.value })}
        aria-keyshortcuts={key === "q" ? "/" : undefined}
      />
    </Field>
  );
  return (
    <form
      role="search"
      aria-label="Filter the board"
      className="grid w-full grid-cols-[minmax(0,1fr)_auto] items-end gap-2 md:flex md:w-auto md:flex-wrap [&_input]:w-full [&_select]:w-full md:[&_input]:w-auto md:[&_select]:w-auto"
      onSubmit={(event) => event.preventDefault()}
    >
      {text("q", "Search (/)", searchRef)}
      <Button className="min-h-8 md:hidden" aria-expanded={open} aria-controls="board-more-filters" onClick={() => setOpen((shown) => !shown)}>
        Filters{active ? ` (${active} active)` : ""}
      </Button>
      <div id="board-more-filters" className={`${open ? "grid" : "hidden"} col-span-2 grid-cols-2 items-end gap-2 md:contents`}>
        {text("agent", "Agent")}
        {text("project", "Project")}
        {text("branch", "Branch")}
        <Field label="Severity">
          <ChoiceSelect value={values.severity} choices={SEVERITY_CHOICES} labels={ANY} onChoose={(severity) => choose("severity", severity)} />
        </Field>
        <Field label="Flag">
          <ChoiceSelect value={values.flag} choices={FLAG_CHOICES} labels={FLAG_LABELS} onChoose={(flag) => choose("flag", flag)} />
        </Field>
      </div>
    </form>
  );
});
