import type { ReactNode } from "react";
import type { CanonicalPacket, CanonicalQuestion } from "@/lib/packet/canonical";
import { FLAG_TITLES, type Flag } from "@/lib/packet/lint";
import { severityRank } from "@/lib/packet/severity";
import { SeverityBadge } from "@/components/threads/severity-badge";
import { Section } from "./section";

/** The active packet in readable sections: the seven fields, metadata and flags with reasons. */
export function PacketSections({
  packet,
  flags,
  answerFor,
}: {
  packet: CanonicalPacket;
  flags: Flag[];
  /** What shows under each of the agent's questions: its answer, or a form to give one. */
  answerFor?: (question: CanonicalQuestion) => ReactNode;
}) {
  const risks = [...(packet.open_risks ?? [])].sort((a, b) => severityRank(b.severity) - severityRank(a.severity));
  return (
    <div className="grid gap-4 lg:grid-cols-2">
      <Section id="next-action" title="Next action">
        {packet.next_action ? (
          <>
            <p className="text-xl font-semibold">{packet.next_action.text}</p>
            {packet.next_action.command ? <pre className="mt-2 overflow-x-auto rounded bg-zinc-100 p-2 text-sm dark:bg-zinc-800">{packet.next_action.command}</pre> : null}
            {packet.next_action.owner ? <p className="mt-1 text-sm text-zinc-500">owner: {packet.next_action.owner}</p> : null}
          </>
        ) : (
          <p className="text-zinc-500 italic">No next action recorded.</p>
        )}
      </Section>
      <Section id="flags" title="Flags">
        {flags.length ? (
          <ul className="space-y-1 text-sm">
            {flags.map((flag) => (
              <li key={flag.code}>
                <span className="font-semibold">{FLAG_TITLES[flag.code]}</span> <code className="text-xs text-zinc-500">{flag.code}</code>: {flag.reason}
              </li>
            ))}
          </ul>
        ) : (
          <p className="text-sm text-zinc-500">None: a clean handoff.</p>
        )}
      </Section>
      <Section id="summary" title="Summary">
        <p className="whitespace-pre-wrap">{packet.summary ?? <span className="text-zinc-500 italic">No summary.</span>}</p>
        <dl className="mt-3 grid grid-cols-[auto_1fr] gap-x-3 gap-y-0.5 text-sm">
          {([
            ["Agent", packet.agent ? [packet.agent.name, packet.agent.kind, packet.agent.model].filter(Boolean).join(" · ") : null],
            ["Project", packet.project],
            ["Branch", packet.branch],
            ["Topic", packet.topic],
            ["Task", packet.task_id],
            ["Session", packet.session_id],
            ["Created", packet.created_at],
            ["Last good commit", packet.last_known_good_commit],
          ] as const).map(([label, value]) =>
            value ? (
              <div key={label} className="contents">
                <dt className="text-zinc-500">{label}</dt>
                <dd className="break-all">{value}</dd>
              </div>
            ) : null,
          )}
        </dl>
      </Section>
      <Section id="risks" title={`Open risks (${risks.length})`}>
        {risks.length ? (
          <ul className="space-y-1.5 text-sm">
            {risks.map((risk) => (
              <li key={risk.id} className="flex gap-2">
                <SeverityBadge severity={risk.severity} />
                <span>
                  {risk.detail}
                  {risk.severity_raw && risk.severity_raw.toLowerCase() !== risk.severity ? (
                    <span className="text-zinc-500"> (said “{risk.severity_raw}”)</span>
                  ) : null}
                  {risk.mitigation ? <span className="block text-zinc-500">mitigation: {risk.mitigation}</span> : null}
                </span>
              </li>
            ))}
          </ul>
        ) : (
          <p className="text-sm text-zinc-500">No open risks.</p>
        )}
      </Section>
      {packet.questions_for_human?.length ? (
        <Section id="questions" title="Questions for a person">
          <ul className="space-y-2 text-sm">
            {packet.questions_for_human.map((question) => (
              <li key={question.id}>
                {question.blocking ? <span className="mr-1 rounded bg-red-700 px-1 text-xs text-white">blocking</span> : null}
                {question.question}
                {question.context ? <span className="block text-zinc-500">{question.context}</span> : null}
                {question.options?.length ? <span className="block text-zinc-500">options: {question.options.join(" / ")}</span> : null}
                {answerFor?.(question)}
              </li>
            ))}
          </ul>
        </Section>
      ) : null}
      <Section id="files" title={`Changed files (${packet.changed_files?.length ?? 0})`}>
        <ul className="font-mono text-sm">
          {(packet.changed_files ?? []).map((file) => (
            <li key={file.path}>
              {file.path}
              {file.change ? <span className="text-zinc-500"> {file.change}</span> : null}
              {file.additions !== undefined || file.deletions !== undefined ? (
                <span className="text-zinc-500"> +{file.additions ?? 0} −{file.deletions ?? 0}</span>
              ) : null}
            </li>
          ))}
        </ul>
      </Section>
      <Section id="commands" title="Commands run">
        <ul className="space-y-0.5 font-mono text-sm">
          {(packet.commands_run ?? []).map((command, index) => (
            <li key={index}>
              <span className={command.exit_code ? "text-red-700 dark:text-red-400" : undefined}>{command.command}</span>
              {command.exit_code !== undefined ? <span className="text-zinc-500"> → exit {command.exit_code ?? "none"}</span> : null}
            </li>
          ))}
        </ul>
      </Section>
      <Section id="failed" title="Failed attempts">
        {packet.failed_attempts?.length ? (
          <ul className="space-y-1 text-sm">
            {packet.failed_attempts.map((attempt, index) => (
              <li key={index}>
                <span className="font-mono">{attempt.attempt}</span>
                {attempt.reason ? <span className="block text-zinc-500">{attempt.reason}</span> : null}
              </li>
            ))}
          </ul>
        ) : (
          <p className="text-sm text-zinc-500">None recorded.</p>
        )}
      </Section>
      {packet.clean_state?.length ? (
        <Section id="clean-state" title="Clean-state problems">
          <ul className="list-disc pl-5 text-sm">
            {packet.clean_state.map((problem, index) => (
              <li key={index}>{problem.check ? <span className="font-semibold">{problem.check}: </span> : null}{problem.detail}</li>
            ))}
          </ul>
        </Section>
      ) : null}
      {packet.assumptions_to_validate?.length ? (
        <Section id="assumptions" title="Assumptions to validate">
          <ul className="list-disc pl-5 text-sm">
            {packet.assumptions_to_validate.map((assumption, index) => (
              <li key={index}>{assumption.text}</li>
            ))}
          </ul>
        </Section>
      ) : null}
    </div>
  );
}
