import type { ReactNode } from "react";
import type { CanonicalPacket, CanonicalQuestion } from "@/lib/contract/canonical";
import { FLAG_TITLES, type Flag } from "@/lib/contract/lint";
import { severityRank } from "@/lib/contract/severity";
import { SeverityBadge } from "@/components/shared/severity-badge";
import { AgentText, AgentTextList } from "@/components/ui/agent-text";
import { Panel } from "@/components/ui/panel";
import { When } from "@/components/ui/time";

/** The active packet in readable sections: the seven fields, metadata and flags with reasons. */
export function PacketSections({
  packet,
  flags,
  flagsComputedAt,
  receivedAt,
  now,
  answerFor,
}: {
  packet: CanonicalPacket;
  /** When Baton received the packet (ISO 8601): told beside the agent's created_at. */
  receivedAt: string;
  /** When the page was made (ms): ages are measured from it. */
  now: number;
  flags: Flag[];
  /** When the flags were computed (ISO 8601): the board's card shows the same ones (lib/board/flags.ts). */
  flagsComputedAt?: string;
  /** What shows under each of the agent's questions: its answer, or a form to give one. */
  answerFor?: (question: CanonicalQuestion) => ReactNode;
}) {
  const risks = [...(packet.open_risks ?? [])].sort((a, b) => severityRank(b.severity) - severityRank(a.severity));
  return (
    <div className="grid gap-4 lg:grid-cols-2">
      <Panel headingId="next-action" title="Next action">
        {packet.next_action ? (
          <>
            <p className="text-xl font-semibold whitespace-pre-wrap">
              <AgentText text={packet.next_action.text} multiline />
            </p>
            {packet.next_action.command ? <pre tabIndex={0} className="mt-2 overflow-x-auto rounded bg-sunken p-2 text-sm">
                <AgentText text={packet.next_action.command} multiline />
              </pre> : null}
            {packet.next_action.owner ? <p className="mt-1 text-sm text-muted">owner: <AgentText text={packet.next_action.owner} /></p> : null}
          </>
        ) : (
          <p className="text-muted italic">No next action recorded.</p>
        )}
      </Panel>
      <Panel headingId="flags" title="Flags">
        {flags.length ? (
          <ul className="space-y-1 text-sm">
            {flags.map((flag) => (
              <li key={flag.code}>
                <span className="font-semibold">{FLAG_TITLES[flag.code]}</span> <code className="text-xs text-muted">{flag.code}</code>: <AgentText text={flag.reason} />
              </li>
            ))}
          </ul>
        ) : (
          <p className="text-sm text-muted">None: a clean handoff.</p>
        )}
        {flagsComputedAt ? (
          <p className="mt-2 text-xs text-muted">
            As of <When iso={flagsComputedAt} now={now} />
          </p>
        ) : null}
      </Panel>
      <Panel headingId="summary" title="Summary">
        <p className="whitespace-pre-wrap">{packet.summary ? <AgentText text={packet.summary} multiline /> : <span className="text-muted italic">No summary.</span>}</p>
        <dl className="mt-3 grid grid-cols-[auto_1fr] gap-x-3 gap-y-0.5 text-sm">
          {([
            ["Agent", packet.agent ? <AgentTextList items={[packet.agent.name, packet.agent.kind, packet.agent.model]} /> : null],
            ["Project", packet.project],
            ["Branch", packet.branch],
            ["Topic", packet.topic],
            ["Task", packet.task_id],
            ["Session", packet.session_id],
            ["Received", <When key="received" iso={receivedAt} written={packet.created_at} now={now} />],
            ["Last good commit", packet.last_known_good_commit],
          ] as const).map(([label, value]) =>
            value ? (
              <div key={label} className="contents">
                <dt className="text-muted">{label}</dt>
                <dd className="break-all">{typeof value === "string" ? <AgentText text={value} /> : value}</dd>
              </div>
            ) : null,
          )}
        </dl>
      </Panel>
      <Panel headingId="risks" title={`Open risks (${risks.length})`}>
        {risks.length ? (
          <ul className="space-y-1.5 text-sm">
            {risks.map((risk) => (
              <li key={risk.id} className="flex gap-2">
                <SeverityBadge severity={risk.severity} />
                <span>
                  <AgentText text={risk.detail} multiline />
                  {risk.severity_raw && risk.severity_raw.toLowerCase() !== risk.severity ? (
                    <span className="text-muted">
                      {" "}
                      (said “<AgentText text={risk.severity_raw} />”)
                    </span>
                  ) : null}
                  {risk.mitigation ? (
                    <span className="block text-muted">
                      mitigation: <AgentText text={risk.mitigation} multiline />
                    </span>
                  ) : null}
                </span>
              </li>
            ))}
          </ul>
        ) : (
          <p className="text-sm text-muted">No open risks.</p>
        )}
      </Panel>
      {packet.questions_for_human?.length ? (
        <Panel headingId="questions" title="Questions for a person">
          <ul className="space-y-2 text-sm">
            {packet.questions_for_human.map((question) => (
              <li key={question.id}>
                {question.blocking ? <span className="mr-1 rounded bg-red-700 px-1 text-xs text-white">blocking</span> : null}
                <AgentText text={question.question} multiline />
                {question.context ? <AgentText className="block text-muted" text={question.context} multiline /> : null}
                {question.options?.length ? (
                  <span className="block text-muted">
                    options: <AgentTextList items={question.options} separator=" / " />
                  </span>
                ) : null}
                {answerFor?.(question)}
              </li>
            ))}
          </ul>
        </Panel>
      ) : null}
      <Panel headingId="files" title={`Changed files (${packet.changed_files?.length ?? 0})`}>
        <ul className="font-mono text-sm">
          {(packet.changed_files ?? []).map((file) => (
            <li key={file.path}>
              <AgentText text={file.path} />
              {file.change ? (
                <span className="text-muted">
                  {" "}
                  <AgentText text={file.change} />
                </span>
              ) : null}
              {file.additions !== undefined || file.deletions !== undefined ? (
                <span className="text-muted"> +{file.additions ?? 0} −{file.deletions ?? 0}</span>
              ) : null}
            </li>
          ))}
        </ul>
      </Panel>
      <Panel headingId="commands" title="Commands run">
        <ul className="space-y-0.5 font-mono text-sm">
          {(packet.commands_run ?? []).map((command, index) => (
            <li key={index}>
              <AgentText className={command.exit_code ? "text-danger" : undefined} text={command.command} />
              {command.exit_code !== undefined ? <span className="text-muted"> → exit {command.exit_code ?? "none"}</span> : null}
            </li>
          ))}
        </ul>
      </Panel>
      <Panel headingId="failed" title="Failed attempts">
        {packet.failed_attempts?.length ? (
          <ul className="space-y-1 text-sm">
            {packet.failed_attempts.map((attempt, index) => (
              <li key={index}>
                <AgentText className="font-mono" text={attempt.attempt} />
                {attempt.reason ? <AgentText className="block text-muted" text={attempt.reason} multiline /> : null}
              </li>
            ))}
          </ul>
        ) : (
          <p className="text-sm text-muted">None recorded.</p>
        )}
      </Panel>
      {packet.clean_state?.length ? (
        <Panel headingId="clean-state" title="Clean-state problems">
          <ul className="list-disc pl-5 text-sm">
            {packet.clean_state.map((problem, index) => (
              <li key={index}>
                {problem.check ? (
                  <span className="font-semibold">
                    <AgentText text={problem.check} />:{" "}
                  </span>
                ) : null}
                <AgentText text={problem.detail} multiline />
              </li>
            ))}
          </ul>
        </Panel>
      ) : null}
      {packet.assumptions_to_validate?.length ? (
        <Panel headingId="assumptions" title="Assumptions to validate">
          <ul className="list-disc pl-5 text-sm">
            {packet.assumptions_to_validate.map((assumption, index) => (
              <li key={index}>
                <AgentText text={assumption.text} multiline />
              </li>
            ))}
          </ul>
        </Panel>
      ) : null}
    </div>
  );
}
