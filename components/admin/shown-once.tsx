"use client";

import { useId, useRef, useState, type ReactNode } from "react";
import { Button } from "@/components/ui/button";
import { Input } from "@/components/ui/field";

interface ShownOnceProps {
  /** Names the field ("New token for ci-runner"). */
  label: string;
  note: ReactNode;
  secret: string;
  /** What it is, for the message when copying is not allowed ("token", "secret"). */
  what: string;
  onDone: () => void;
}

/**
 * A secret shown once (a new token, a generated signing secret): selected on focus, a
 * Copy button (or, where the clipboard is refused, selected for Ctrl+C), and Done.
 * It lives only in the creating form's state, so a reload forgets it.
 */
export function ShownOnce({ label, note, secret, what, onDone }: ShownOnceProps) {
  const id = useId();
  const field = useRef<HTMLInputElement>(null);
  const [copyStatus, setCopyStatus] = useState<string | null>(null);

  async function copy() {
    try {
      await navigator.clipboard.writeText(secret);
      setCopyStatus("Copied.");
    } catch {
      // No clipboard access (a page served over plain http on another host): select it for Ctrl+C.
      field.current?.select();
      setCopyStatus(`Copying is not allowed here: the ${what} is selected, press Ctrl+C (or ⌘C) to copy it.`);
    }
  }

  return (
    <div className="mb-4 flex flex-col gap-2 rounded-md bg-amber-50 p-3 ring-1 ring-amber-200 dark:bg-amber-950 dark:ring-amber-900">
      <label htmlFor={`${id}-secret`} className="text-sm font-medium">
        {label}
      </label>
      <p id={`${id}-note`} className="text-sm">
        {note}
      </p>
      <div className="flex flex-wrap gap-2">
        <Input
          ref={field}
          id={`${id}-secret`}
          readOnly
          autoFocus
          value={secret}
          onFocus={(event) => event.currentTarget.select()}
          aria-describedby={`${id}-note`}
          spellCheck={false}
          className="min-w-0 flex-1 font-mono"
        />
        <Button variant="primary" onClick={copy}>
          Copy
        </Button>
        <Button onClick={onDone}>Done</Button>
      </div>
      <p role="status" className="text-sm">
        {copyStatus}
      </p>
    </div>
  );
}
