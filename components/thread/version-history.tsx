import type { ThreadDetailDto } from "@/lib/views/threads/dto";
import type { VersionDiffDto } from "@/lib/views/threads/dto";
import { SeverityBadge } from "@/components/shared/severity-badge";
import { AgentText } from "@/components/ui/agent-text";
import { buttonClass } from "@/components/ui/button";
import { Field, Select } from "@/components/ui/field";
import { When } from "@/components/ui/time";
import { formatMoment } from "@/lib/browser/moment";
import { Panel } from "@/components/ui/panel";

interface VersionHistoryProps {
  thread: ThreadDetailDto;
  from: string | null;
  to: string | null;
  diff: VersionDiffDto | null;
  /** When the page was made (ms): ages are measured from it. */
  now: number;
}

/** Every version, newest first, and a diff between any two (a plain GET form: works without script). */
export function VersionHistory({ thread, from, to, diff, now }: VersionHistoryProps) {
  const options = thread.versions.map((version, index) => (
    <option key={version.id} value={version.id}>
      {`v${thread.versions.length - index} · ${formatMoment(version.received_at)}${version.active ? " (active)" : ""}`}
    </option>
  ));
  return (
    <Panel headingId="history" title={`Versions (${thread.versions.length})`}>
      <ol className="space-y-1 text-sm">
        {thread.versions.map((version, index) => (
          <li key={version.id} className="flex flex-wrap items-center gap-2">
            <span className="font-mono text-xs">v{thread.versions.length - index}</span>
            <SeverityBadge severity={version.highest_severity} />
            <span>{version.next_action ? <AgentText text={version.next_action} /> : <em className="text-muted">no next action</em>}</span>
            <span className="text-xs text-muted">
              {version.source} · <When iso={version.received_at} written={version.created_at} now={now} />
              {version.active ? " · active" : ""}
            </span>
          </li>
        ))}
      </ol>
      {thread.versions.length > 1 ? (
        <form method="get" className="mt-3 flex flex-wrap items-end gap-2 text-sm" aria-label="Compare two versions">
          <Field label="From">
            <Select name="from" defaultValue={from ?? undefined}>
              {options}
            </Select>
          </Field>
          <Field label="To">
            <Select name="to" defaultValue={to ?? undefined}>
              {options}
            </Select>
          </Field>
          <button type="submit" className={buttonClass("primary")}>
            Compare
          </button>
        </form>
      ) : null}
      {diff ? <DiffView diff={diff} /> : null}
    </Panel>
  );
}

function DiffView({ diff }: { diff: VersionDiffDto }) {
  return (
    <div className="mt-3 space-y-2 text-sm" aria-label="Differences" role="region">
      <p>
        <span className="font-semibold">Next action: </span>
        {diff.next_action.changed ? (
          <>
            <del className="text-danger">{diff.next_action.before ? <AgentText text={diff.next_action.before} /> : "none"}</del> →{" "}
            <ins className="text-emerald-700 no-underline dark:text-emerald-400">{diff.next_action.after ? <AgentText text={diff.next_action.after} /> : "none"}</ins>
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
            <li key={item}>
              <AgentText text={item} />
            </li>
          ))}
        </ul>
      ) : (
        "none"
      )}
    </div>
  );
}
