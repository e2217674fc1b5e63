import type { HumanSection } from "@/lib/human/section";
import { AgentText } from "@/components/ui/agent-text";
import { Badge } from "@/components/ui/badge";
import { When } from "@/components/ui/time";

/** What people decided, answered and asked on the active packet: the `human` section the next session reads. */
export function HumanSectionView({ human, now }: { human: HumanSection; now: number }) {
  if (human.revision === 0) return <p className="text-sm text-muted">No one has acted on this packet yet.</p>;
  return (
    <div className="space-y-2 text-sm">
      {human.decision ? (
        <p>
          <span className="font-semibold">{human.decision.kind === "approved" ? "Approved" : "Intervened"}</span> by <AgentText text={human.decision.by} /> <When iso={human.decision.at} now={now} />
          {human.decision.note ? (
            <>
              : <AgentText text={human.decision.note} multiline />
            </>
          ) : null}
        </p>
      ) : null}
      {human.questions.length ? (
        <div>
          <h3 className="font-semibold">Instructions for the next session</h3>
          <ul className="list-disc pl-5">
            {human.questions.map((question) => (
              <li key={question.id}>
                {question.settled_by ? (
                  <Badge className="mr-1 bg-zinc-200 dark:bg-zinc-800">
                    settled by <AgentText text={question.settled_by} />
                  </Badge>
                ) : question.blocking ? (
                  <Badge className="mr-1 bg-amber-700 text-white">blocking</Badge>
                ) : null}
                <AgentText className="whitespace-pre-wrap" text={question.text} multiline />{" "}
                <span className="text-xs text-muted">
                  (<AgentText text={question.by} />, <When iso={question.at} now={now} />)
                </span>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      <p className="text-xs text-muted">Revision {human.revision}, updated {human.updated_at ? <When iso={human.updated_at} now={now} /> : "never"}.</p>
    </div>
  );
}
