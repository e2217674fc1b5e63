import type { ButtonHTMLAttributes } from "react";

/**
 * The button looks of every screen: one place to change them. Each variant names its own
 * size and focus colour (two utilities for one property would leave the winner to the
 * stylesheet's order); `className` may add colours, never override these.
 */
const BASE = "min-h-6 min-w-6 disabled:opacity-60 focus-visible:outline-2 focus-visible:outline-offset-2";
const REGULAR = "rounded-md text-sm focus-visible:outline-focus";

export const BUTTON_VARIANTS = {
  /** The form's main action. */
  primary: `${REGULAR} bg-sky-700 px-3 py-1.5 font-medium text-white hover:bg-sky-800`,
  /** Other actions: a ring, no fill. */
  secondary: `${REGULAR} px-2 py-1 ring-1 ring-zinc-300 hover:bg-zinc-100 dark:ring-zinc-700 dark:hover:bg-zinc-800`,
  /** A destructive action, once confirmed. */
  danger: "rounded-md text-sm bg-red-700 px-2 py-1 font-medium text-white hover:bg-red-800 focus-visible:outline-red-600",
  /** Acknowledge: a triage action that keeps the risk. */
  success: `${REGULAR} bg-emerald-700 px-3 py-1 font-semibold text-white hover:bg-emerald-800`,
  /** Resolve: a triage action that closes the risk. */
  neutral: `${REGULAR} bg-zinc-700 px-3 py-1 font-semibold text-white hover:bg-zinc-800`,
  /** Snooze: a triage action that hides the risk for a while. */
  snooze: `${REGULAR} bg-violet-700 px-3 py-1 font-semibold text-white hover:bg-violet-800`,
  /** An offered choice (an answer, a snooze length). */
  choice: `${REGULAR} bg-sunken px-2.5 py-1 font-medium ring-1 ring-zinc-300 hover:bg-zinc-200 dark:ring-zinc-700 dark:hover:bg-zinc-700`,
  /** Reads as a link: cancel, clear, show more. */
  link: `${REGULAR} px-2 py-1 text-link underline`,
  /** A small outlined action on a card or beside a question; its colour comes from `className`. */
  small: "rounded px-2 py-0.5 text-xs font-semibold ring-1 focus-visible:outline-focus",
} as const;

export type ButtonVariant = keyof typeof BUTTON_VARIANTS;

/** The class of a button (or of a link that looks like one). */
export function buttonClass(variant: ButtonVariant = "secondary", extra?: string): string {
  return [BASE, BUTTON_VARIANTS[variant], extra].filter(Boolean).join(" ");
}

interface ButtonProps extends ButtonHTMLAttributes<HTMLButtonElement> {
  variant?: ButtonVariant;
  ref?: React.Ref<HTMLButtonElement>;
}

/** A button; type="button" unless said otherwise, so that it never submits a form by accident. */
export function Button({ variant = "secondary", className, type = "button", ...props }: ButtonProps) {
  return <button type={type} className={buttonClass(variant, className)} {...props} />;
}

/** A form's submit button; while `pending` it is disabled and says what it is doing. */
export function SubmitButton({ pending, pendingLabel, children }: { pending: boolean; pendingLabel?: string; children: React.ReactNode }) {
  return (
    <Button type="submit" variant="primary" disabled={pending}>
      {pending && pendingLabel ? pendingLabel : children}
    </Button>
  );
}
