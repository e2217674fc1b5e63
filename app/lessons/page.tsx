import type { Metadata } from "next";
import { LessonsFilter } from "@/components/lessons/lessons-filter";
import { LessonsTable } from "@/components/lessons/lessons-table";
import { requirePagePerson } from "@/lib/auth/page-person";
import { LESSON_WINDOW_DAYS } from "@/lib/views/lessons/dto";
import { lessonsQuerySchema, listLessons } from "@/lib/views/lessons/queries";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Lessons" };

type SearchParams = Promise<Record<string, string | string[] | undefined>>;

/** Recurring failures (docs/product.md#recurring-failures): failed attempts that repeat across versions and threads, newest first. */
export default async function LessonsPage({ searchParams }: { searchParams: SearchParams }) {
  await requirePagePerson("/lessons");
  const { q } = await searchParams;
  const parsed = lessonsQuerySchema.safeParse({ q: typeof q === "string" && q.trim() ? q : undefined });
  const query = parsed.success ? parsed.data : {};
  const { lessons, generated_at, truncated } = await listLessons(query);
  const filtered = Boolean(query.q);
  return (
    <main id="main" className="mx-auto w-full max-w-6xl flex-1 space-y-4 overflow-y-auto p-4">
      <h1 className="text-2xl font-bold">Recurring failures</h1>
      <p className="max-w-3xl text-sm text-muted">
        Failed attempts that more than one packet reported in the last {LESSON_WINDOW_DAYS} days, grouped by what was tried and why it
        failed (numbers, times, temporary paths and hashes aside), the most recently seen first. The same mistake made again is worth
        a rule: turn these into a rule for the agents, in their instructions or as a check, so the next session does not repeat it.
        An entry not seen for {LESSON_WINDOW_DAYS} days drops off.
      </p>
      <LessonsFilter q={query.q ?? ""} />
      {parsed.success ? null : (
        <p role="alert" className="text-sm text-danger">
          The search was not understood and is ignored: {parsed.error.issues.map((issue) => issue.message).join("; ")}
        </p>
      )}
      <p role="status" className="text-xs text-muted">
        {lessons.length} {lessons.length === 1 ? "recurring failure" : "recurring failures"}
        {filtered ? ` matching “${query.q}”` : ""}
        {truncated ? " (the most recent shown; narrow the search for older ones)" : ""}
      </p>
      {lessons.length ? (
        <LessonsTable lessons={lessons} now={Date.parse(generated_at)} />
      ) : (
        <p className="rounded-lg bg-zinc-100 p-4 text-sm text-muted dark:bg-zinc-900">
          {filtered ? "No recurring failure matches this search." : `No failed attempt has repeated in the last ${LESSON_WINDOW_DAYS} days.`}
        </p>
      )}
    </main>
  );
}
