"use client";

import { useState } from "react";

/**
 * The risks view's filters, kept in the URL so a view can be shared: free text
 * (applied on Enter) and whether resolved and snoozed risks are shown.
 */
export function RiskFilters({ search, onChange }: { search: string; onChange: (next: URLSearchParams) => void }) {
  const params = new URLSearchParams(search);
  const showAll = params.get("state") === "all";
  const [text, setText] = useState(params.get("q") ?? "");

  const apply = (changes: Record<string, string | null>) => {
    const next = new URLSearchParams(search);
    for (const [key, value] of Object.entries(changes)) {
      if (value) next.set(key, value);
      else next.delete(key);
    }
    onChange(next);
  };

  return (
    <div className="flex flex-wrap items-end gap-4">
      <form
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          apply({ q: text.trim() || null });
        }}
        className="flex items-end gap-2"
      >
        <label className="flex flex-col text-xs text-zinc-600 dark:text-zinc-400">
          Search risks
          <input
            type="search"
            value={text}
            onChange={(event) => setText(event.target.value)}
            placeholder="detail, thread or agent; Enter"
            maxLength={200}
            className="mt-0.5 w-72 rounded border-0 bg-white px-2 py-1 text-sm text-zinc-900 ring-1 ring-zinc-300 focus-visible:ring-2 focus-visible:ring-sky-600 focus-visible:outline-none dark:bg-zinc-900 dark:text-zinc-100 dark:ring-zinc-700"
          />
        </label>
      </form>
      <label className="flex items-center gap-2 text-sm text-zinc-700 dark:text-zinc-300">
        <input type="checkbox" checked={showAll} onChange={(event) => apply({ state: event.target.checked ? "all" : null })} className="size-4 accent-sky-700" />
        Show resolved and snoozed
      </label>
    </div>
  );
}
