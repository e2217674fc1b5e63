const inputClass =
  "rounded-md border border-zinc-300 bg-white px-2 py-1 text-sm dark:border-zinc-700 dark:bg-zinc-900 focus-visible:outline-2 focus-visible:outline-sky-600";

/** The board's free-text filter, as a plain GET form: the view is shareable by its address and works without script. */
export function LessonsFilter({ q }: { q: string }) {
  return (
    <form method="get" role="search" aria-label="Filter the lessons" className="flex flex-wrap items-end gap-2">
      <label className="flex flex-col text-xs text-zinc-600 dark:text-zinc-400">
        Search
        <input type="search" name="q" defaultValue={q} maxLength={200} className={inputClass} />
      </label>
      <button
        type="submit"
        className="rounded-md bg-zinc-800 px-3 py-1 text-sm text-white focus-visible:outline-2 focus-visible:outline-sky-600 dark:bg-zinc-200 dark:text-zinc-900"
      >
        Filter
      </button>
    </form>
  );
}
