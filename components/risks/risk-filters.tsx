"use client";

import { useState } from "react";
import { Checkbox, Field, Input } from "@/components/ui/field";

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
        <Field label="Search risks">
          <Input type="search" value={text} onChange={(event) => setText(event.target.value)} placeholder="detail, thread or agent; Enter" maxLength={200} className="w-72" />
        </Field>
      </form>
      <Checkbox
        label="Show resolved and snoozed"
        checked={showAll}
        onChange={(event) => apply({ state: event.target.checked ? "all" : null })}
        className="text-zinc-700 dark:text-zinc-300"
      />
    </div>
  );
}
