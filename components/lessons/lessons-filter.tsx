import { buttonClass } from "@/components/ui/button";
import { Field, Input } from "@/components/ui/field";

/** The board's free-text filter, as a plain GET form: the view is shareable by its address and works without script. */
export function LessonsFilter({ q }: { q: string }) {
  return (
    <form method="get" role="search" aria-label="Filter the lessons" className="flex flex-wrap items-end gap-2">
      <Field label="Search">
        <Input type="search" name="q" defaultValue={q} maxLength={200} />
      </Field>
      <button type="submit" className={buttonClass("primary")}>
        Filter
      </button>
    </form>
  );
}
