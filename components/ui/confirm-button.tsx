"use client";

import { useRef, useState } from "react";
import { Button } from "./button";

interface ConfirmButtonProps {
  /** The button's words ("Delete"), and its accessible name naming what it acts on ("Delete billing-hook"). */
  label: string;
  name: string;
  /** The confirming button's words and name ("Confirm delete billing-hook"). */
  confirmLabel: string;
  confirmName?: string;
  cancelLabel: string;
  cancelName?: string;
  pending: boolean;
  onOpen?: () => void;
  onConfirm: () => void;
}

/**
 * A destructive action in two steps: the button, then in its place a confirming (danger)
 * button that takes the focus and one that cancels, which gives the focus back to the button.
 */
export function ConfirmButton({ label, name, confirmLabel, confirmName, cancelLabel, cancelName, pending, onOpen, onConfirm }: ConfirmButtonProps) {
  const [open, setOpen] = useState(false);
  const opener = useRef<HTMLButtonElement>(null);
  if (!open) {
    return (
      <Button
        ref={opener}
        aria-label={name}
        onClick={() => {
          onOpen?.();
          setOpen(true);
        }}
      >
        {label}
      </Button>
    );
  }
  return (
    <span className="flex gap-2">
      <Button
        variant="danger"
        autoFocus
        aria-label={confirmName}
        aria-busy={pending}
        onClick={() => {
          if (!pending) onConfirm();
        }}
      >
        {confirmLabel}
      </Button>
      <Button
        aria-label={cancelName}
        onClick={() => {
          setOpen(false);
          // Back to the button that opened the confirmation, once it is rendered again.
          requestAnimationFrame(() => opener.current?.focus());
        }}
      >
        {cancelLabel}
      </Button>
    </span>
  );
}
