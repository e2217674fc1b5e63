import type { VerdictPointerReadingDto, VerdictReadingDto, ReviewReportDto, VerificationReportDto } from "@/lib/views/verdict/dto";
import { SeverityBadge } from "@/components/shared/severity-badge";
import { AgentText } from "@/components/ui/agent-text";
import { Badge } from "@/components/ui/badge";
import { Panel } from "@/components/ui/panel";

const STATE_STYLE = {
  pass: "bg-emerald-700 text-white",
  fail: "bg-red-700 text-white",
  missing: "bg-zinc-300 text-zinc-900",
} as const;

/** The verification and review reports behind the verdict pointers, read from the workspace root or sent with the packet. */
export function VerdictSection({ reading }: { reading: VerdictReadingDto }) {
  return (
    <Panel headingId="verdict" title="Verdict">
      <p className="flex flex-wrap items-center gap-2">
        <Badge large className={`font-semibold uppercase ${STATE_STYLE[reading.summary.state]}`}>{reading.summary.state}</Badge>
        <AgentText className="text-sm" text={reading.summary.reasons.join("; ")} />
      </p>
      <ul className="mt-3 space-y-3">
        {reading.pointers.map((pointer, index) => (
          <li key={`${pointer.ref}-${index}`} data-testid="verdict-pointer" data-status={pointer.status} data-from={pointer.from}>
            <PointerReading pointer={pointer} />
          </li>
        ))}
      </ul>
    </Panel>
  );
}

function PointerReading({ pointer }: { pointer: VerdictPointerReadingDto }) {
  const label = (
    <span className="text-xs text-muted">
      {pointer.kind} ·{" "}
      <code>
        <AgentText text={pointer.ref} />
      </code>
      {pointer.from === "attached" ? " · sent with the packet" : null}
    </span>
  );
  if (pointer.status === "link" && pointer.url) {
    return (
      <p>
        {label}{" "}
        <a href={pointer.url} rel="noopener noreferrer nofollow" target="_blank" className="text-link underline">
          open the report
        </a>
      </p>
    );
  }
  if (pointer.status !== "ok" || !pointer.report) {
    const words = { missing: "missing", refused: "refused", invalid: "unreadable", no_root: "not sent", ok: "", link: "" }[pointer.status];
    return (
      <p>
        {label} <span className="font-semibold">{words}</span>
        {pointer.reason ? (
          <span className="text-sm">
            : <AgentText text={pointer.reason} />
          </span>
        ) : null}
      </p>
    );
  }
  return (
    <div>
      {label}
      {pointer.report.type === "verification" ? <Verification report={pointer.report} /> : <Review report={pointer.report} />}
    </div>
  );
}

function Verification({ report }: { report: VerificationReportDto }) {
  const coverage =
    report.coverage === null
      ? null
      : typeof report.coverage === "number"
        ? `${Math.round(report.coverage * 100)}%`
        : `${Math.round(report.coverage.current * 100)}%${report.coverage.previous === null ? "" : ` (was ${Math.round(report.coverage.previous * 100)}%)`}`;
  return (
    <div className="mt-1 text-sm" aria-label="Verification report">
      <p className="font-semibold">
        Verification {report.passed ? "passed" : "did not pass"}
        {coverage ? <span className="font-normal"> · coverage {coverage}</span> : null}
        {report.head_commit ? (
          <span className="font-normal text-muted">
            {" "}
            · at <AgentText text={report.head_commit} />
          </span>
        ) : null}
      </p>
      <ul className="mt-1 space-y-1">
        {report.findings
          .filter((group) => group.count > 0)
          .flatMap((group) =>
            group.items.map((finding, index) => (
              <li key={`${group.severity}-${index}`} className="flex gap-2">
                <SeverityBadge severity={group.severity} />
                <span>
                  {finding.code ? (
                    <code className="text-xs">
                      <AgentText text={finding.code} />
                    </code>
                  ) : null}{" "}
                  <AgentText text={finding.detail} multiline />
                </span>
              </li>
            )),
          )}
      </ul>
    </div>
  );
}

function Review({ report }: { report: ReviewReportDto }) {
  return (
    <div className="mt-1 text-sm" aria-label="Review report">
      <p className="font-semibold">
        Review {report.total}/10 · {report.verdict.replace("_", " ")}
      </p>
      <table className="mt-1 text-left">
        <thead className="sr-only">
          <tr>
            <th>Dimension</th>
            <th>Score</th>
            <th>Note</th>
          </tr>
        </thead>
        <tbody>
          {report.dimensions.map((dimension) => (
            <tr key={dimension.name}>
              <td className="pr-3 font-mono text-xs">
                <AgentText text={dimension.name} />
              </td>
              <td className="pr-3">{dimension.score}/2</td>
              <td className="text-muted">
                <AgentText text={dimension.note} multiline />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {report.missing_dimensions.length ? <p className="text-xs text-muted">not scored: <AgentText text={report.missing_dimensions.join(", ")} /></p> : null}
    </div>
  );
}
