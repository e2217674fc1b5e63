import type { InputHTMLAttributes, ReactNode, SelectHTMLAttributes, TextareaHTMLAttributes } from "react";
import { names, type Problem } from "@/lib/browser/problem";

/** Text inputs and selects of every screen; invalid ones get a red border. */
export const INPUT_CLASS =
  "rounded-md border border-zinc-300 bg-surface px-2 py-1 text-sm text-fg aria-[invalid=true]:border-red-600 dark:border-zinc-700 dark:aria-[invalid=true]:border-red-500 focus-visible:outline-2 focus-visible:outline-focus";
const LABEL_CLASS = "flex flex-col gap-1 text-xs text-muted";
const HINT_CLASS = "text-xs text-muted";
const join = (...classes: (string | undefined | false)[]) => classes.filter(Boolean).join(" ");

/** A labelled control: the label wraps it, so a click on the words focuses it. `hint` (with `hintId`) says what it takes. */
export function Field({ label, hint, hintId, className, children }: { label: ReactNode; hint?: ReactNode; hintId?: string; className?: string; children: ReactNode }) {
  const field = (
    <label className={join(LABEL_CLASS, className)}>
      {label}
      {children}
    </label>
  );
  if (!hint) return field;
  return (
    <div className="flex flex-col gap-1">
      {field}
      <p id={hintId} className={HINT_CLASS}>
        {hint}
      </p>
    </div>
  );
}

/**
 * The ARIA that ties a control to the form's error box: invalid when the problem names
 * `field`, described by the box then (and always by its hint, when it has one).
 */
export function fieldAria(problem: Problem | null, field: string, alertId: string, hintId?: string) {
  const invalid = names(problem, field);
  return { "aria-invalid": invalid, "aria-describedby": join(hintId, invalid && alertId) || undefined };
}

export function Input({ className, ...props }: InputHTMLAttributes<HTMLInputElement> & { ref?: React.Ref<HTMLInputElement> }) {
  return <input className={join(INPUT_CLASS, className)} {...props} />;
}

export function Select({ className, ...props }: SelectHTMLAttributes<HTMLSelectElement>) {
  return <select className={join(INPUT_CLASS, className)} {...props} />;
}

export function TextArea({ className, ...props }: TextareaHTMLAttributes<HTMLTextAreaElement> & { ref?: React.Ref<HTMLTextAreaElement> }) {
  return <textarea className={join(INPUT_CLASS, className)} {...props} />;
}

/** A checkbox with its words to the right. */
export function Checkbox({ label, className, ...props }: InputHTMLAttributes<HTMLInputElement> & { label: ReactNode }) {
  return (
    <label className={join("flex items-center gap-1.5 text-sm", className)}>
      <input type="checkbox" className="size-4 accent-sky-700 focus-visible:outline-2 focus-visible:outline-focus" {...props} />
      {label}
    </label>
  );
}

/** A select over a fixed list of choices, each shown by its label (or as it is); a filter's "" choice can be labelled "any". */
export function ChoiceSelect<T extends string>({
  choices,
  labels,
  onChoose,
  ...props
}: Omit<SelectHTMLAttributes<HTMLSelectElement>, "onChange"> & { choices: readonly T[]; labels?: Readonly<Partial<Record<T, string>>>; onChoose?: (choice: T) => void }) {
  return (
    <Select {...props} onChange={onChoose && ((event) => onChoose(event.target.value as T))}>
      {choices.map((choice) => (
        <option key={choice} value={choice}>
          {labels?.[choice] ?? choice}
        </option>
      ))}
    </Select>
  );
}

/** Checkboxes that choose some of `choices`, under a legend; `aria` ties the group to the form's error box. */
export function CheckboxGroup<T extends string>({
  legend,
  name,
  choices,
  value,
  onChange,
  label,
  aria,
  className = "flex flex-col gap-1",
}: {
  legend: ReactNode;
  name: string;
  choices: readonly T[];
  value: readonly T[];
  onChange: (chosen: T[]) => void;
  label: (choice: T) => ReactNode;
  aria: ReturnType<typeof fieldAria>;
  className?: string;
}) {
  return (
    <fieldset {...aria}>
      <legend className="mb-1 text-xs text-muted">{legend}</legend>
      <div className={className}>
        {choices.map((choice) => (
          <Checkbox
            key={choice}
            name={name}
            value={choice}
            checked={value.includes(choice)}
            onChange={(event) => onChange(event.target.checked ? [...value, choice] : value.filter((chosen) => chosen !== choice))}
            label={label(choice)}
          />
        ))}
      </div>
    </fieldset>
  );
}
