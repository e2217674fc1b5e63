import type { ThreadDetailDto } from "@/lib/threads/dto";
import type { VersionDiffDto } from "@/lib/threads/dto";
import { SeverityBadge } from "@/components/threads/severity-badge";
import { Section } from "./section";

interface VersionHistoryProps {
  thread: ThreadDetailDto;
  from: string | null;
  to: string | null;
  diff: VersionDiffDto | null;
}

/** Every version, newest first, and a diff between any two (a plain GET form: works without script). */
export function VersionHistory({ thread, from, to, diff }: VersionHistoryProps) {
  const options = thread.versions.map((version, index) => (
    <option key={version.id} value={version.id}>
      {`v${thread.versions.length - index} · ${version.received_at.replace("T", " ").slice(0, 16)}${version.active ? " (active)" : ""}`}
    </option>
  ));
  return (
    <Section id="history" title={`Versions (${thread.versions.length})`}>
      <ol className="space-y-1 text-sm">
        {thread.versions.map((version, index) => (
          <li key={version.id} className="flex flex-wrap items-center gap-2">
            <span className="font-mono text-xs">v{thread.versions.length - index}</span>
            <SeverityBadge severity={version.highest_severity} />
            <span>{version.next_action ?? <em className="text-zinc-500">no next action</em>}</span>
            <span className="text-xs text-zinc-500">
              {version.source} · {version.received_at.replace("T", " ").slice(0, 19)} UTC{version.active ? " · active" : ""}
            </span>
          </li>
        ))}
      </ol>
      {thread.versions.length > 1 ? (
        <form method="get" className="mt-3 flex flex-wrap items-end gap-2 text-sm" aria-label="Compare two versions">
          <label className="flex flex-col text-xs">
            From
            <select name="from" defaultValue={from ?? undefined} className="rounded border border-zinc-300 bg-white px-1 py-0.5 dark:border-zinc-700 dark:bg-zinc-900">
              {options}
            </select>
          </label>
          <label className="flex flex-col text-xs">
            To
            <select name="to" defaultValue={to ?? undefined} className="rounded border border-zinc-300 bg-white px-1 py-0.5 dark:border-zinc-700 dark:bg-zinc-900">
              {options}
            </select>
          </label>
          <button type="submit" className="rounded bg-zinc-800 px-2 py-1 text-white focus-visible:outline-2 focus-visible:outline-sky-600 dark:bg-zinc-200 dark:text-zinc-900">
            Compare
          </button>
        </form>
      ) : null}
      {diff ? <DiffView diff={diff} /> : null}
    </Section>
  );
}

function DiffView({ diff }: { diff: VersionDiffDto }) {
  return (
    <div className="mt-3 space-y-2 text-sm" aria-label="Differences" role="region">
      <p>
        <span className="font-semibold">Next action: </span>
        {diff.next_action.changed ? (
          <>
            <del className="text-red-700 dark:text-red-400">{diff.next_action.before ?? "none"}</del> →{" "}
            <ins className="text-emerald-700 no-underline dark:text-emerald-400">{diff.next_action.after ?? "none"}</ins>
          </>
        ) : (
          "unchanged"
        )}
      </p>
      <DiffList title="Risks added" items={diff.risks_added.map((risk) => `${risk.severity}: ${risk.detail}`)} />
      <DiffList title="Risks removed" items={diff.risks_removed.map((risk) => `${risk.severity}: ${risk.detail}`)} />
      <DiffList title="Severity changed" items={diff.risks_severity_changed.map((risk) => `${risk.detail}: ${risk.before} → ${risk.after}`)} />
      <DiffList title="Files added" items={diff.files_added} />
      <DiffList title="Files no longer changed" items={diff.files_removed} />
    </div>
  );
}

function DiffList({ title, items }: { title: string; items: string[] }) {
  return (
    <div>
      <span className="font-semibold">{title}: </span>
      {items.length ? (
        <ul className="list-disc pl-5">
          {items.map((item) => (
            <li key={item}>{item}</li>
          ))}
        </ul>
      ) : (
        "none"
      )}
    </div>
  );
}
